import { createHash, randomBytes } from 'node:crypto';
import type { Database } from '../db/database.ts';
import { stmt } from '../db/statements.ts';

/**
 * Per-session report credentials (docs/contracts.md, C1). Every spawn call carries a fresh
 * `reportToken`; only its SHA-256 is stored, with the session and attempt. The worker's outcome
 * report must bear one of the tokens issued for that session. A 256-bit random token needs no slow
 * hash: the digest only keeps a database reader from replaying it.
 */
export function mintReportToken(): string {
  return randomBytes(32).toString('base64url');
}

const digest = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

export function storeReportToken(db: Database, sessionId: string, attempt: number, token: string, now: number): void {
  stmt(db, 'INSERT INTO report_tokens (session_id, attempt, token_sha256, created_at) VALUES (?, ?, ?, ?)').run(sessionId, attempt, digest(token), now);
}

/**
 * True when `token` was issued for `sessionId`. The lookup is by the token's digest, so its timing
 * says nothing about the token, and an unknown session looks exactly like a wrong token.
 */
export function isReportTokenFor(db: Database, sessionId: string, token: string): boolean {
  return stmt(db, 'SELECT 1 AS ok FROM report_tokens WHERE session_id = ? AND token_sha256 = ?').get(sessionId, digest(token)) !== undefined;
}
