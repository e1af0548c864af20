import { describe, expect, it } from 'vitest';
import { openDatabase } from '../db/database.ts';
import { applySeed, parseSeed } from '../seed.ts';
import { applySessionEvent, applyStatusEvent, getSession, insertSession } from './sessions.ts';
import { SESSION_EVENTS, SESSION_STATUSES, transition } from '../sessions/state-machine.ts';

/** The SQL paths (the guarded UPDATE and the transactional one) agree with the pure state machine. */
describe('session store moves', () => {
  const db = openDatabase(':memory:');
  applySeed(
    db,
    parseSeed({
      workspaces: [
        { id: 'ws_s', name: 'S', keys: {}, deployments: [{ id: 'dpl_s', status: 'ACTIVE', interview: { title: 't', intro: 'i', questions: [{ id: 'q', text: 'q?' }], closing: 'c' } }] },
      ],
    }),
    0,
  );
  let n = 0;
  function sessionIn(status: string): string {
    const id = `inv_t${n++}`;
    insertSession(db, { id, workspaceId: 'ws_s', deploymentId: 'dpl_s', metadata: {}, url: 'u', createdAt: 0, expiresAt: 1 });
    db.prepare('UPDATE sessions SET status = ? WHERE id = ?').run(status, id);
    return id;
  }

  for (const from of SESSION_STATUSES) {
    for (const event of SESSION_EVENTS) {
      it(`${from} + ${event}`, () => {
        const want = transition(from, event);
        const expectedStatus = want.kind === 'move' ? want.to : from;
        if (event !== 'completed') {
          const id = sessionIn(from);
          expect(applyStatusEvent(db, id, event, 5000)).toBe(want.kind === 'move' ? 'moved' : want.kind === 'stay' ? 'stayed' : 'refused');
          expect(getSession(db, id)!.status).toBe(expectedStatus);
        }
        const id2 = sessionIn(from);
        const result = applySessionEvent(db, id2, event, 7000, { response: { transcriptKey: 'file:///t.json', summary: 's' } });
        expect(result.kind).toBe(want.kind === 'move' ? 'moved' : want.kind === 'stay' ? 'stayed' : 'refused');
        const after = getSession(db, id2)!;
        expect(after.status).toBe(expectedStatus);
        if (want.kind === 'move' && event === 'clicked') expect(after.clickedAt).toBe(7000);
        if (want.kind === 'move' && event === 'completed') expect(after.response?.transcriptKey).toBe('file:///t.json');
        if (want.kind !== 'move') expect(after.response).toBeNull();
      });
    }
  }

  it('reports unknown sessions', () => {
    expect(applyStatusEvent(db, 'inv_none', 'clicked', 1)).toBe('not_found');
    expect(applySessionEvent(db, 'inv_none', 'clicked', 1).kind).toBe('not_found');
  });
});
