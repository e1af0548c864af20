import { describe, expect, it } from 'vitest';
import { SESSION_EVENTS, SESSION_STATUSES, transition, type SessionEvent, type SessionStatus } from './state-machine.ts';

/** The full table, written out: from-state x event -> next state, '=' for stay, '!' for refuse. */
const TABLE: Record<SessionStatus, Record<SessionEvent, SessionStatus | '=' | '!'>> = {
  PENDING: { link_sent: 'SENT', clicked: 'CLICKED', connected: 'STARTED', failed: '!', completed: '!', expired: 'EXPIRED' },
  SENT: { link_sent: '=', clicked: 'CLICKED', connected: 'STARTED', failed: '!', completed: '!', expired: 'EXPIRED' },
  CLICKED: { link_sent: '=', clicked: '=', connected: 'STARTED', failed: '!', completed: '!', expired: 'EXPIRED' },
  STARTED: { link_sent: '=', clicked: '=', connected: '=', failed: '=', completed: 'COMPLETED', expired: 'EXPIRED' },
  COMPLETED: { link_sent: '=', clicked: '!', connected: '!', failed: '!', completed: '=', expired: '!' },
  EXPIRED: { link_sent: '=', clicked: '!', connected: '!', failed: '!', completed: '!', expired: '=' },
};

describe('session state machine', () => {
  for (const from of SESSION_STATUSES) {
    for (const event of SESSION_EVENTS) {
      const want = TABLE[from][event];
      it(`${from} + ${event} -> ${want === '=' ? 'stays' : want === '!' ? 'refused' : want}`, () => {
        const got = transition(from, event);
        if (want === '=') expect(got).toEqual({ kind: 'stay' });
        else if (want === '!') {
          expect(got.kind).toBe('refuse');
          expect(got.kind === 'refuse' && got.reason.length > 10).toBe(true);
        } else expect(got).toEqual({ kind: 'move', to: want });
      });
    }
  }

  it('walks the normal path PENDING -> SENT -> CLICKED -> STARTED -> COMPLETED', () => {
    let state: SessionStatus = 'PENDING';
    for (const event of ['link_sent', 'clicked', 'connected', 'completed'] as const) {
      const t = transition(state, event);
      if (t.kind !== 'move') throw new Error(`expected a move on ${event} from ${state}`);
      state = t.to;
    }
    expect(state).toBe('COMPLETED');
  });

  it('never leaves a terminal state and never moves backwards', () => {
    const order = (s: SessionStatus): number => SESSION_STATUSES.indexOf(s);
    for (const from of SESSION_STATUSES) {
      for (const event of SESSION_EVENTS) {
        const t = transition(from, event);
        if (t.kind !== 'move') continue;
        expect(from === 'COMPLETED' || from === 'EXPIRED').toBe(false);
        expect(order(t.to)).toBeGreaterThan(order(from));
      }
    }
  });
});
