import type { Database } from '../db/database.ts';
import { inGroupCommit, transaction } from '../db/database.ts';
import { noteWriteError, storageFailureOf } from '../db/write-health.ts';
import { stmt } from '../db/statements.ts';
import { HttpError } from '../../lib/errors.ts';
import { decide, windowStart, windows, type RateCaps, type RateDecision } from './policy.ts';

/**
 * Which budget a call draws on: calls made with a publishable key (from browsers: creation, connect)
 * and calls made with a secret key (from the customer's server) are counted apart, so that anyone
 * holding the public key cannot spend the budget the customer's own server needs (docs/api.md).
 */
export type Budget = 'publishable' | 'secret';

/** The stored counter name of a window for a budget; secret keeps the names counters had before. */
const counterKind = (budget: Budget, kind: string): string => (budget === 'secret' ? kind : `pk_${kind}`);

/**
 * Counts one call against a workspace's caps of one budget, with the counters in SQLite so that a
 * restart does not reset them. A refused call is not counted. Run it inside a transaction (see
 * consumeRate); the creation path runs it in the same transaction as the insert, so one commit does both.
 */
export function countCall(db: Database, workspaceId: string, caps: RateCaps, now: number, budget: Budget = 'secret'): RateDecision {
  const { uses, starts, kinds } = storedUses(db, workspaceId, caps, now, budget);
  const decision = decide(caps, uses, now);
  if (!decision.allowed) return decision;
  uses.forEach(({ used }, i) => {
    // The first call of a new window drops the workspace's older windows of that kind.
    if (used === 0)
      stmt(db, 'DELETE FROM rate_counters WHERE workspace_id = ? AND window_kind = ? AND window_start < ?').run(
        workspaceId,
        kinds[i]!,
        starts[i]!,
      );
    stmt(
      db,
      `INSERT INTO rate_counters (workspace_id, window_kind, window_start, count) VALUES (?, ?, ?, 1)
       ON CONFLICT (workspace_id, window_kind, window_start) DO UPDATE SET count = count + 1`,
    ).run(workspaceId, kinds[i]!, starts[i]!);
  });
  return decision;
}

/** The calls counted so far in the windows that hold `now`. */
function storedUses(db: Database, workspaceId: string, caps: RateCaps, now: number, budget: Budget) {
  const specs = windows(caps);
  const starts = specs.map((spec) => windowStart(now, spec.seconds));
  const kinds = specs.map((spec) => counterKind(budget, spec.kind));
  const rows = stmt(
    db,
    `SELECT window_kind, count FROM rate_counters
     WHERE workspace_id = ? AND ((window_kind = ? AND window_start = ?) OR (window_kind = ? AND window_start = ?))`,
  ).all(workspaceId, kinds[0]!, starts[0]!, kinds[1]!, starts[1]!);
  const uses = specs.map((spec, i) => ({ spec, used: Number(rows.find((r) => r.window_kind === kinds[i])?.count ?? 0) }));
  return { uses, starts, kinds };
}

/**
 * Counts a read (session retrieval, the delivery log) through the group commit, so that concurrent
 * reads share one commit. A read must still answer when the database cannot write (a full disk, an
 * I/O error): then the counter fails open for this call. The decision is made from the counters as
 * stored, without counting the call, so a workspace already over its cap is still refused.
 */
export async function countRead(db: Database, workspaceId: string, caps: RateCaps, now: number): Promise<RateDecision> {
  try {
    return await inGroupCommit(db, () => countCall(db, workspaceId, caps, now));
  } catch (err) {
    if (storageFailureOf(err) === null) throw err;
    noteWriteError(db, err); // readiness learns of it, even from a BEGIN that failed
    return decide(caps, storedUses(db, workspaceId, caps, now, 'secret').uses, now);
  }
}

/** countCall in its own transaction. */
export function consumeRate(db: Database, workspaceId: string, caps: RateCaps, now: number, budget: Budget = 'secret'): RateDecision {
  return transaction(db, () => countCall(db, workspaceId, caps, now, budget));
}

/** The 429 for a refused decision, carrying Retry-After and the RateLimit headers. */
export function rateLimitError(decision: Extract<RateDecision, { allowed: false }>, budget: Budget = 'secret'): HttpError {
  const which = decision.policy === 'hourly' ? 'hourly cap' : 'service cap (requests per second)';
  const keys = budget === 'secret' ? 'secret-key' : 'publishable-key';
  return new HttpError(
    'rate_limit_exceeded',
    `The workspace's ${which} for ${keys} calls is reached. Retry after ${decision.retryAfterSeconds} s.`,
    decision.headers,
  );
}
