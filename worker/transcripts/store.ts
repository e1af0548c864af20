import type { WorkerConfig } from '../config.ts';
import { FileTranscriptStore } from './file.ts';

/** Where finished transcripts go. `put` returns the object-store URI reported as `transcriptKey`. */
export interface TranscriptStore {
  put(sessionId: string, body: string): Promise<string>;
}

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

/** Session ids are `inv_<id>`; anything else must never become part of a path or key. */
export function objectName(sessionId: string): string {
  if (!/^inv_[A-Za-z0-9_-]{1,64}$/.test(sessionId)) throw new Error('refusing to store a transcript under a malformed session id');
  return `${sessionId}.json`;
}
