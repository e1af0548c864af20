import type { Database } from '../db/database.ts';
import { transaction } from '../db/database.ts';
import { stmt } from '../db/statements.ts';
import { HttpError } from '../../lib/errors.ts';
import { decide, windowStart, windows, type RateCaps, type RateDecision } from './policy.ts';

/**
 * Counts one call against a workspace's caps, with the counters in SQLite so that a restart does
 * not reset them. A refused call is not counted. Old windows are pruned as new ones open.
 */
export function consumeRate(db: Database, workspaceId: string, caps: RateCaps, now: number): RateDecision {
  return transaction(db, () => {
    const specs = windows(caps);
    const uses = specs.map((spec) => {
      const row = stmt(db, 'SELECT count FROM rate_counters WHERE workspace_id = ? AND window_kind = ? AND window_start = ?').get(
        workspaceId,
        spec.kind,
        windowStart(now, spec.seconds),
      );
      return { spec, used: row ? Number(row.count) : 0 };
    });
    const decision = decide(caps, uses, now);
    if (!decision.allowed) return decision;
    for (const { spec, used } of uses) {
      const start = windowStart(now, spec.seconds);
      if (used === 0) {
        stmt(db, 'DELETE FROM rate_counters WHERE workspace_id = ? AND window_kind = ? AND window_start < ?').run(workspaceId, spec.kind, start);
      }
      stmt(
        db,
        `INSERT INTO rate_counters (workspace_id, window_kind, window_start, count) VALUES (?, ?, ?, 1)
         ON CONFLICT (workspace_id, window_kind, window_start) DO UPDATE SET count = count + 1`,
      ).run(workspaceId, spec.kind, start);
    }
    return decision;
  });
}

/** The 429 for a refused decision, carrying Retry-After and the RateLimit headers. */
export function rateLimitError(decision: Extract<RateDecision, { allowed: false }>): HttpError {
  const which = decision.policy === 'hourly' ? 'hourly cap' : 'service cap (requests per second)';
  return new HttpError('rate_limit_exceeded', `The workspace's ${which} is reached. Retry after ${decision.retryAfterSeconds} s.`, decision.headers);
}
