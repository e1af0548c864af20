import type { Database } from '../db/database.ts';
import { inGroupCommit } from '../db/database.ts';
import type { Clock } from '../../lib/time.ts';
import type { Logger } from '../../lib/log.ts';
import { markSent } from '../store/sessions.ts';

/**
 * Moves a session to SENT once its 201 has been written (res 'finish'). The update runs at once on
 * the app's connection, so any later read there (a retrieval, the respondent page) sees SENT; it is
 * committed with the other writes of the same event-loop turn (group commit) instead of costing a
 * commit of its own.
 */
export interface SentMarker {
  mark(sessionId: string): void;
}

export function createSentMarker(db: Database, clock: Clock, log: Logger): SentMarker {
  return {
    mark(sessionId) {
      inGroupCommit(db, () => markSent(db, sessionId, clock()), { savepoint: false }).catch((err: unknown) => {
        log.error('marking a session SENT failed', { sessionId, err });
      });
    },
  };
}
