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

export function storeReportToken(
  db: Database,
  spawn: { sessionId: string; attempt: number; route: string },
  token: string,
  now: number,
): void {
  stmt(db, 'INSERT INTO report_tokens (session_id, attempt, token_sha256, created_at, route) VALUES (?, ?, ?, ?, ?)').run(
    spawn.sessionId,
    spawn.attempt,
    digest(token),
    now,
    spawn.route,
  );
}

/** A spawn that failed (the pipeline did not take the session): its token will never report. */
export function forgetReportToken(db: Database, sessionId: string, token: string): void {
  stmt(db, 'DELETE FROM report_tokens WHERE session_id = ? AND token_sha256 = ?').run(sessionId, digest(token));
}

/** A hosted spawn since `?` (first parameter) for a session other than `?` (second) that has no outcome after it. */
const HELD_HOSTED = `t.route = 'hosted' AND t.created_at > ? AND t.session_id <> ?
      AND s.status NOT IN ('COMPLETED', 'EXPIRED') AND (s.failed_at IS NULL OR s.failed_at < t.created_at)`;

/**
 * Sessions of a workspace that hold a hosted slot now, other than `exceptSessionId`: a hosted spawn
 * since `since`, and no outcome after it (not COMPLETED or EXPIRED, no failure reported after it).
 * Spawns still in flight count: the token is stored before the call.
 */
export function countHeldHostedSessions(db: Database, workspaceId: string, since: number, exceptSessionId: string): number {
  return Number(
    stmt(
      db,
      `SELECT count(DISTINCT t.session_id) AS n FROM report_tokens t JOIN sessions s ON s.id = t.session_id
    WHERE s.workspace_id = ? AND ${HELD_HOSTED}`,
    ).get(workspaceId, since, exceptSessionId)!.n,
  );
}

/** The same count for every workspace that holds a hosted slot now: the shared pool's occupancy. */
export function heldHostedByWorkspace(db: Database, since: number, exceptSessionId: string): Map<string, number> {
  const rows = stmt(
    db,
    `SELECT s.workspace_id AS ws, count(DISTINCT t.session_id) AS n FROM report_tokens t JOIN sessions s ON s.id = t.session_id
    WHERE ${HELD_HOSTED} GROUP BY s.workspace_id`,
  ).all(since, exceptSessionId);
  return new Map(rows.map((r) => [String(r.ws), Number(r.n)]));
}

/**
 * True when `token` was issued for `sessionId`. The lookup is by the token's digest, so its timing
 * says nothing about the token, and an unknown session looks exactly like a wrong token.
 */
export function isReportTokenFor(db: Database, sessionId: string, token: string): boolean {
  return (
    stmt(db, 'SELECT 1 AS ok FROM report_tokens WHERE session_id = ? AND token_sha256 = ?').get(sessionId, digest(token)) !== undefined
  );
}
