import { createHash } from 'node:crypto';
import type { Database } from '../db/database.ts';
import { stmt } from '../db/statements.ts';

/**
 * Idempotency keys of session creation, per workspace. The fingerprint is a hash of the request's
 * meaning (interviewId and metadata as canonical JSON), so key order in `metadata` does not matter.
 */
export function canonicalJson(value: unknown): string {
  // -0 is its own value (metadata comes back unchanged), so it is its own fingerprint too.
  if (value === null || typeof value !== 'object') return Object.is(value, -0) ? '-0' : (JSON.stringify(value) ?? 'null');
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.keys(value as Record<string, unknown>)
    .sort()
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
  return `{${entries.join(',')}}`;
}

export function requestFingerprint(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

export interface IdempotencyRecord {
  requestHash: string;
  sessionId: string;
  createdAt: number;
}

/** The remembered creation for this key, if it is younger than `ttlMs`. */
export function findIdempotencyKey(db: Database, workspaceId: string, key: string, now: number, ttlMs: number): IdempotencyRecord | null {
  const row = stmt(
    db,
    'SELECT request_hash, session_id, created_at FROM idempotency_keys WHERE workspace_id = ? AND idempotency_key = ? AND created_at > ?',
  ).get(workspaceId, key, now - ttlMs);
  return row ? { requestHash: String(row.request_hash), sessionId: String(row.session_id), createdAt: Number(row.created_at) } : null;
}

/** Remembers a creation; an expired entry under the same key is replaced. */
export function rememberIdempotencyKey(db: Database, workspaceId: string, key: string, record: IdempotencyRecord): void {
  stmt(
    db,
    `INSERT INTO idempotency_keys (workspace_id, idempotency_key, request_hash, session_id, created_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (workspace_id, idempotency_key) DO UPDATE SET request_hash = excluded.request_hash,
       session_id = excluded.session_id, created_at = excluded.created_at`,
  ).run(workspaceId, key, record.requestHash, record.sessionId, record.createdAt);
}
