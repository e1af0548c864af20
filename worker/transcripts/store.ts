import type { WorkerConfig } from '../config.ts';
import { FileTranscriptStore } from './file.ts';
import { S3TranscriptStore } from './s3.ts';

/** Where finished transcripts go. `put` returns the object-store URI reported as `transcriptKey`. */
export interface TranscriptStore {
  put(sessionId: string, body: string): Promise<string>;
}

export function createTranscriptStore(config: Pick<WorkerConfig, 'transcriptStore' | 's3'>): TranscriptStore {
  if (config.transcriptStore.startsWith('file://')) return new FileTranscriptStore(config.transcriptStore);
  return new S3TranscriptStore(config.transcriptStore, config.s3);
}

/** Session ids are `inv_<id>`; anything else must never become part of a path or key. */
export function objectName(sessionId: string): string {
  if (!/^inv_[A-Za-z0-9_-]{1,64}$/.test(sessionId)) throw new Error('refusing to store a transcript under a malformed session id');
  return `${sessionId}.json`;
}
