/**
 * The transcript store's contract and the one rule for object names, apart from the factory
 * (store.ts) so that the stores implementing it do not import the module that picks them.
 */

/** Where finished transcripts go. `put` returns the object-store URI reported as `transcriptKey`. */
export interface TranscriptStore {
  put(sessionId: string, body: string): Promise<string>;
}

/** Session ids are `inv_<id>`; anything else must never become part of a path or key. */
export function objectName(sessionId: string): string {
  if (!/^inv_[A-Za-z0-9_-]{1,64}$/.test(sessionId)) throw new Error('refusing to store a transcript under a malformed session id');
  return `${sessionId}.json`;
}
