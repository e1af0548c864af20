/**
 * The session state machine (spec section 3; the moves are ours, drawn in docs/session-states.md).
 * One pure function decides every move: the store applies its answer and nothing else changes
 * a session's status.
 *
 *   PENDING --link_sent--> SENT --clicked--> CLICKED --connected--> STARTED --completed--> COMPLETED
 *   PENDING, SENT, CLICKED, STARTED --expired--> EXPIRED
 *   STARTED --failed--> STARTED (the respondent may retry until the link expires)
 */
export const SESSION_STATUSES = ['PENDING', 'SENT', 'CLICKED', 'STARTED', 'COMPLETED', 'EXPIRED'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

export const SESSION_EVENTS = ['link_sent', 'clicked', 'connected', 'failed', 'completed', 'expired'] as const;
/**
 * - link_sent: the 201 carrying the sessionUrl was written to the client.
 * - clicked:   the respondent page was opened.
 * - connected: a connect call spawned the voice pipeline successfully.
 * - failed:    the pipeline reported a failed interview (interview.failed).
 * - completed: the pipeline reported a completed interview with its response.
 * - expired:   expiresAt passed before the session completed.
 */
export type SessionEvent = (typeof SESSION_EVENTS)[number];

export const TERMINAL_STATUSES: ReadonlySet<SessionStatus> = new Set(['COMPLETED', 'EXPIRED']);

export type Transition =
  /** The status changes to `to`. */
  | { kind: 'move'; to: SessionStatus }
  /** A harmless repeat or a late event: the status stays as it is and nothing is recorded. */
  | { kind: 'stay' }
  /** The event is not allowed in this status; `reason` says why in words a client can act on. */
  | { kind: 'refuse'; reason: string };

const ORDER: Record<SessionStatus, number> = { PENDING: 1, SENT: 2, CLICKED: 3, STARTED: 4, COMPLETED: 5, EXPIRED: 6 };

function terminalRefusal(from: SessionStatus): Transition {
  return { kind: 'refuse', reason: from === 'COMPLETED' ? 'The session is already completed.' : 'The session has expired.' };
}

export function transition(from: SessionStatus, event: SessionEvent): Transition {
  switch (event) {
    case 'link_sent':
      // Only the first delivery of the link matters; a replayed 201 later changes nothing.
      return from === 'PENDING' ? { kind: 'move', to: 'SENT' } : { kind: 'stay' };
    case 'clicked':
      if (TERMINAL_STATUSES.has(from)) return terminalRefusal(from);
      // Opening the link proves it was delivered, so PENDING may jump to CLICKED.
      return ORDER[from] < ORDER.CLICKED ? { kind: 'move', to: 'CLICKED' } : { kind: 'stay' };
    case 'connected':
      if (TERMINAL_STATUSES.has(from)) return terminalRefusal(from);
      // A second connect (e.g. a retry after interview.failed) keeps STARTED.
      return from === 'STARTED' ? { kind: 'stay' } : { kind: 'move', to: 'STARTED' };
    case 'failed':
      if (from === 'STARTED') return { kind: 'stay' };
      if (TERMINAL_STATUSES.has(from)) return terminalRefusal(from);
      return { kind: 'refuse', reason: `A session in status ${from} has not started, so it cannot fail.` };
    case 'completed':
      if (from === 'STARTED') return { kind: 'move', to: 'COMPLETED' };
      if (from === 'COMPLETED') return { kind: 'stay' };
      if (from === 'EXPIRED') return terminalRefusal(from);
      return { kind: 'refuse', reason: `A session in status ${from} has not started, so it cannot complete.` };
    case 'expired':
      if (from === 'EXPIRED') return { kind: 'stay' };
      if (from === 'COMPLETED') return terminalRefusal(from);
      return { kind: 'move', to: 'EXPIRED' };
  }
}
