import type { Database } from '../db/database.ts';
import { inGroupCommit } from '../db/database.ts';
import type { Clock } from '../../lib/time.ts';
import type { Logger } from '../../lib/log.ts';
import { markSent } from '../store/sessions.ts';

/**
 * Moves a session to SENT once its 201 has been written (res 'finish'). The update runs at once, so
 * any later read (a retrieval, the respondent page) sees SENT. 'finish' fires while the answers of a
 * group commit are written, so the marks of those answers share one commit too, made as soon as
 * they are all done (a microtask), before Node reads sockets again.
 */
export interface SentMarker {
  mark(sessionId: string): void;
}

export function createSentMarker(db: Database, clock: Clock, log: Logger): SentMarker {
  return {
    mark(sessionId) {
      inGroupCommit(db, () => markSent(db, sessionId, clock()), { savepoint: false, commitOn: 'microtask' }).catch((err: unknown) => {
        log.error('marking a session SENT failed', { sessionId, err });
      });
    },
  };
}
