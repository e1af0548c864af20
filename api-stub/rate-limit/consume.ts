import type { Database } from '../db/database.ts';
import { transaction } from '../db/database.ts';
import { stmt } from '../db/statements.ts';
import { HttpError } from '../../lib/errors.ts';
import { decide, windowStart, windows, type RateCaps, type RateDecision } from './policy.ts';

/**
 * Counts one call against a workspace's caps, with the counters in SQLite so that a restart does
 * not reset them. A refused call is not counted. Run it inside a transaction (see consumeRate);
 * the creation path runs it in the same transaction as the insert, so one commit does both.
 */
export function countCall(db: Database, workspaceId: string, caps: RateCaps, now: number): RateDecision {
  const specs = windows(caps);
  const starts = specs.map((spec) => windowStart(now, spec.seconds));
  const rows = stmt(
    db,
    `SELECT window_kind, count FROM rate_counters
     WHERE workspace_id = ? AND ((window_kind = 'hour' AND window_start = ?) OR (window_kind = 'second' AND window_start = ?))`,
  ).all(workspaceId, starts[0]!, starts[1]!);
  const uses = specs.map((spec) => ({ spec, used: Number(rows.find((r) => r.window_kind === spec.kind)?.count ?? 0) }));
  const decision = decide(caps, uses, now);
  if (!decision.allowed) return decision;
  uses.forEach(({ spec, used }, i) => {
    // The first call of a new window drops the workspace's older windows of that kind.
    if (used === 0) stmt(db, 'DELETE FROM rate_counters WHERE workspace_id = ? AND window_kind = ? AND window_start < ?').run(workspaceId, spec.kind, starts[i]!);
    stmt(
      db,
      `INSERT INTO rate_counters (workspace_id, window_kind, window_start, count) VALUES (?, ?, ?, 1)
       ON CONFLICT (workspace_id, window_kind, window_start) DO UPDATE SET count = count + 1`,
    ).run(workspaceId, spec.kind, starts[i]!);
  });
  return decision;
}

/** countCall in its own transaction. */
export function consumeRate(db: Database, workspaceId: string, caps: RateCaps, now: number): RateDecision {
  return transaction(db, () => countCall(db, workspaceId, caps, now));
}

/** The 429 for a refused decision, carrying Retry-After and the RateLimit headers. */
export function rateLimitError(decision: Extract<RateDecision, { allowed: false }>): HttpError {
  const which = decision.policy === 'hourly' ? 'hourly cap' : 'service cap (requests per second)';
  return new HttpError('rate_limit_exceeded', `The workspace's ${which} is reached. Retry after ${decision.retryAfterSeconds} s.`, decision.headers);
}
