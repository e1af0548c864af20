import type { Logger } from '../../lib/log.ts';
import type { Clock } from '../../lib/time.ts';
import { transaction, type Database } from '../db/database.ts';
import { listExpirableSessionIds, markExpired } from '../store/sessions.ts';
import { expiredEvent } from '../webhooks/events.ts';
import { enqueueEvent } from '../webhooks/outbox-store.ts';

/**
 * The expiry sweeper: every interval, sessions past expiresAt that are neither COMPLETED nor EXPIRED
 * become EXPIRED, each in its own write transaction together with its session.expired event. The
 * state machine re-checks the status inside that transaction (BEGIN IMMEDIATE serializes writers),
 * and the outbox accepts one event of a type per session, so two sweepers fire the webhook once.
 */
export interface Sweeper {
  start(): void;
  stop(): void;
  /** One pass; returns how many sessions it expired. */
  sweep(): number;
}

export function createSweeper(options: { db: Database; clock: Clock; log: Logger; intervalMs: number; onExpired?: () => void; batch?: number }): Sweeper {
  let timer: NodeJS.Timeout | undefined;
  const sweep = (): number => {
    const { db, clock } = options;
    let expired = 0;
    for (;;) {
      const ids = listExpirableSessionIds(db, clock(), options.batch ?? 100);
      let movedThisRound = 0;
      for (const id of ids) {
        const moved = transaction(db, () => {
          const now = clock();
          const result = markExpired(db, id, now);
          if (result.kind !== 'moved') return false;
          const s = result.session;
          enqueueEvent(db, s.workspaceId, expiredEvent({ sessionId: s.id, interviewId: s.deploymentId, metadata: s.metadata },
            { expiresAtMs: s.expiresAt, expiredAtMs: s.expiredAt ?? now, lastStatus: result.from }, now), now, s.id);
          return true;
        });
        if (moved) movedThisRound += 1;
      }
      expired += movedThisRound;
      if (ids.length < (options.batch ?? 100) || movedThisRound === 0) break;
    }
    if (expired > 0) {
      options.log.info('sessions expired', { count: expired });
      options.onExpired?.();
    }
    return expired;
  };
  return {
    sweep,
    start() {
      if (timer) return;
      timer = setInterval(() => {
        try {
          sweep();
        } catch (err) {
          options.log.error('expiry sweep failed', { err });
        }
      }, options.intervalMs);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}
