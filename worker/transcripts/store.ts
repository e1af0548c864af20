import type { WorkerConfig } from '../config.ts';
import { FileTranscriptStore } from './file.ts';
import type { TranscriptStore } from './transcript-store.ts';

export type { TranscriptStore } from './transcript-store.ts';

export function createTranscriptStore(config: Pick<WorkerConfig, 'transcriptStore' | 's3'>): TranscriptStore {
  if (config.transcriptStore.startsWith('file://')) return new FileTranscriptStore(config.transcriptStore);
  // The AWS SDK is loaded on first use only: every warm bot process would otherwise carry it.
  let s3: Promise<TranscriptStore> | null = null;
  return {
    put: async (sessionId, body) => {
      s3 ??= import('./s3.ts').then(({ S3TranscriptStore }) => new S3TranscriptStore(config.transcriptStore, config.s3));
      return (await s3).put(sessionId, body);
    },
  };
}
