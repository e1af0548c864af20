import type { Logger } from '../../lib/log.ts';
import type { Clock } from '../../lib/time.ts';
import { transaction, type Database } from '../db/database.ts';
import { discardProvisionalSession, getSession, listExpirableSessionIds, markExpired } from '../store/sessions.ts';
import { isExpiryDue, STARTED_SESSION_GRACE_DEFAULT_SECONDS } from './expiry-rule.ts';
import { expiredEvent } from '../webhooks/events.ts';
import { enqueueEvent } from '../webhooks/outbox-store.ts';

/**
 * The expiry sweeper: every interval, sessions whose expiry is due (sessions/expiry-rule.ts: not
 * started and past expiresAt, or STARTED and past expiresAt + STARTED_SESSION_GRACE_SECONDS) become EXPIRED, each in
 * its own write transaction together with its session.expired event;
 * a provisional one (connect created it and no bot took it) is deleted instead, with no event. The
 * state machine re-checks the status inside that transaction (BEGIN IMMEDIATE serializes writers),
 * and the outbox accepts one event of a type per session, so two sweepers fire the webhook once.
 */
export interface Sweeper {
  start(): void;
  stop(): void;
  /** One pass; returns how many sessions it expired. */
  sweep(): number;
}

export interface SweeperOptions {
  db: Database;
  clock: Clock;
  log: Logger;
  intervalMs: number;
  /** How long past expiresAt a STARTED session may still complete (default 24 h). */
  startedGraceMs?: number;
  onExpired?: () => void;
  batch?: number;
}

export function createSweeper(options: SweeperOptions): Sweeper {
  let timer: NodeJS.Timeout | undefined;
  const graceMs = options.startedGraceMs ?? STARTED_SESSION_GRACE_DEFAULT_SECONDS * 1000;
  const sweep = (): number => {
    const { db, clock } = options;
    let expired = 0;
    let discarded = 0;
    for (;;) {
      const ids = listExpirableSessionIds(db, clock(), options.batch ?? 100, graceMs);
      let movedThisRound = 0;
      for (const id of ids) {
        const moved = transaction(db, (): boolean | 'discarded' => {
          const now = clock();
          // Re-checked inside the write transaction: a completed report may have landed meanwhile.
          const current = getSession(db, id);
          if (!current || !isExpiryDue(current.status, current.expiresAt, now, graceMs)) return false;
          // Connect created it and no bot ever took it: never offered, so no session.expired.
          if (discardProvisionalSession(db, id)) return 'discarded';
          const result = markExpired(db, id, now);
          if (result.kind !== 'moved') return false;
          const s = result.session;
          enqueueEvent(
            db,
            s.workspaceId,
            expiredEvent(
              { sessionId: s.id, interviewId: s.deploymentId, metadata: s.metadata },
              { expiresAtMs: s.expiresAt, expiredAtMs: s.expiredAt ?? now, lastStatus: result.from },
              now,
            ),
            now,
            s.id,
          );
          return true;
        });
        if (moved === 'discarded') discarded += 1;
        else if (moved) expired += 1;
        if (moved) movedThisRound += 1;
      }
      if (ids.length < (options.batch ?? 100) || movedThisRound === 0) break;
    }
    if (discarded > 0) options.log.info('provisional sessions discarded', { count: discarded });
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
