import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../db/database.ts';
import { applySeed, parseSeed } from '../seed.ts';
import {
  applySessionEvent,
  applyStatusEvent,
  attemptStateOf,
  discardProvisionalSession,
  getSession,
  insertSession,
  isProvisional,
  markClicked,
  markConnected,
  nextConnectAttempt,
  recordAttemptFailure,
} from './sessions.ts';
import { SESSION_EVENTS, SESSION_STATUSES, transition } from '../sessions/state-machine.ts';

/** The SQL paths (the guarded UPDATE and the transactional one) agree with the pure state machine. */
describe('session store moves', () => {
  const db = openDatabase(':memory:');
  applySeed(
    db,
    parseSeed({
      workspaces: [
        {
          id: 'ws_s',
          name: 'S',
          keys: {},
          deployments: [
            { id: 'dpl_s', status: 'ACTIVE', interview: { title: 't', intro: 'i', questions: [{ id: 'q', text: 'q?' }], closing: 'c' } },
          ],
        },
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

/** The store owns a session's attempt, failure and route: connect and the outcome report only call these. */
describe('session attempts', () => {
  const db = openDatabase(':memory:');
  applySeed(
    db,
    parseSeed({
      workspaces: [
        {
          id: 'ws_a',
          name: 'A',
          keys: {},
          deployments: [
            { id: 'dpl_a', status: 'ACTIVE', interview: { title: 't', intro: 'i', questions: [{ id: 'q', text: 'q?' }], closing: 'c' } },
          ],
        },
      ],
    }),
    0,
  );
  let n = 0;
  const newSession = (): string => {
    const id = `inv_a${n++}`;
    insertSession(db, { id, workspaceId: 'ws_a', deploymentId: 'dpl_a', metadata: {}, url: 'u', createdAt: 0, expiresAt: 10_000 });
    return id;
  };
  const routeOf = (id: string): unknown => db.prepare('SELECT route FROM sessions WHERE id = ?').get(id)?.route;

  it('starts at attempt 0 with no failure, and the first connect keeps attempt 0', () => {
    const id = newSession();
    expect(attemptStateOf(db, id)).toEqual({ attempt: 0, failedAt: null });
    expect(nextConnectAttempt(db, id)).toBe(0);
    const moved = markConnected(db, id, { route: 'hosted', attempt: 0 }, 100);
    expect(moved.kind).toBe('moved');
    expect(getSession(db, id)!.status).toBe('STARTED');
    expect(routeOf(id)).toBe('hosted');
    expect(attemptStateOf(db, id)).toEqual({ attempt: 0, failedAt: null });
  });

  it('records a failure once per attempt, and the connect after it opens the next attempt', () => {
    const id = newSession();
    markConnected(db, id, { route: 'self_hosted', attempt: 0 }, 100);
    expect(recordAttemptFailure(db, id, 'llm_unavailable', 200)).toBe(true);
    expect(recordAttemptFailure(db, id, 'llm_unavailable', 300)).toBe(false);
    expect(attemptStateOf(db, id)).toEqual({ attempt: 0, failedAt: 200 });
    expect(db.prepare('SELECT failure_reason FROM sessions WHERE id = ?').get(id)?.failure_reason).toBe('llm_unavailable');
    expect(nextConnectAttempt(db, id)).toBe(1);
    // A reconnect (stays STARTED) that opens attempt 1 clears the failure and records the new route.
    expect(markConnected(db, id, { route: 'hosted', attempt: 1 }, 400).kind).toBe('stayed');
    expect(attemptStateOf(db, id)).toEqual({ attempt: 1, failedAt: null });
    expect(db.prepare('SELECT failure_reason FROM sessions WHERE id = ?').get(id)?.failure_reason).toBeNull();
    expect(routeOf(id)).toBe('hosted');
    expect(nextConnectAttempt(db, id)).toBe(1);
  });

  it('never moves the attempt back: a late connect of an older attempt keeps the newer one', () => {
    const id = newSession();
    markConnected(db, id, { route: 'hosted', attempt: 0 }, 100);
    recordAttemptFailure(db, id, 'bot_crashed', 150);
    markConnected(db, id, { route: 'hosted', attempt: 1 }, 200);
    markConnected(db, id, { route: 'hosted', attempt: 0 }, 250);
    expect(attemptStateOf(db, id)).toEqual({ attempt: 1, failedAt: null });
  });

  it('refuses to connect a terminal session and leaves its columns alone', () => {
    const id = newSession();
    applySessionEvent(db, id, 'expired', 50);
    const result = markConnected(db, id, { route: 'self_hosted', attempt: 0 }, 100);
    expect(result.kind).toBe('refused');
    expect(routeOf(id)).toBeNull();
  });

  it('answers an unknown session with defaults', () => {
    expect(attemptStateOf(db, 'inv_none')).toEqual({ attempt: 0, failedAt: null });
    expect(markConnected(db, 'inv_none', { route: 'hosted', attempt: 0 }, 1).kind).toBe('not_found');
    expect(recordAttemptFailure(db, 'inv_none', 'x', 1)).toBe(false);
  });
});

/** Sessions that connect created: provisional until a spawn succeeds, deleted (not expired) if none does. */
describe('provisional sessions', () => {
  const db = openDatabase(':memory:');
  applySeed(
    db,
    parseSeed({
      workspaces: [
        {
          id: 'ws_p',
          name: 'P',
          keys: {},
          deployments: [
            { id: 'dpl_p', status: 'ACTIVE', interview: { title: 't', intro: 'i', questions: [{ id: 'q', text: 'q?' }], closing: 'c' } },
          ],
        },
      ],
    }),
    0,
  );
  let n = 0;
  const newSession = (provisional: boolean): string => {
    const id = `inv_p${n++}`;
    insertSession(db, {
      id,
      workspaceId: 'ws_p',
      deploymentId: 'dpl_p',
      metadata: {},
      url: 'u',
      createdAt: 0,
      expiresAt: 10_000,
      provisional,
    });
    return id;
  };

  it('only a provisional session that no spawn took is discarded', () => {
    const offered = newSession(false);
    const unclaimed = newSession(true);
    expect([isProvisional(db, offered), isProvisional(db, unclaimed)]).toEqual([false, true]);
    expect(discardProvisionalSession(db, offered)).toBe(false);
    expect(discardProvisionalSession(db, unclaimed)).toBe(true);
    expect(getSession(db, unclaimed)).toBeNull();
    expect(getSession(db, offered)).not.toBeNull();
    expect(discardProvisionalSession(db, unclaimed)).toBe(false);
  });

  it('an opened page ends provisional: the interview was offered', () => {
    const id = newSession(true);
    expect(markClicked(db, id, 300).kind).toBe('moved');
    expect(isProvisional(db, id)).toBe(false);
    expect(discardProvisionalSession(db, id)).toBe(false);
  });

  it('a spawn that succeeds ends provisional and records the page open with STARTED', () => {
    const id = newSession(true);
    expect(markConnected(db, id, { route: 'hosted', attempt: 0 }, 500).kind).toBe('moved');
    expect(isProvisional(db, id)).toBe(false);
    expect(getSession(db, id)).toMatchObject({ status: 'STARTED', clickedAt: 500, startedAt: 500 });
    expect(discardProvisionalSession(db, id)).toBe(false);
  });
});

/** The store is the one writer of a session's status, attempt, failure and route: no SQL elsewhere. */
describe('ownership of the session columns', () => {
  const apiStub = fileURLToPath(new URL('..', import.meta.url));
  const sources = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
      const path = join(dir, e.name);
      if (e.isDirectory()) return sources(path);
      return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [path] : [];
    });

  it('no file but store/sessions.ts writes sessions or touches attempt, failed_at or failure_reason', () => {
    // The hosted-hold count joins report tokens to sessions and reads failed_at (read-only, one query).
    const allowedReads = new Set(['store/report-tokens.ts']);
    const offenders: string[] = [];
    for (const file of sources(apiStub)) {
      const name = relative(apiStub, file);
      if (name === 'store/sessions.ts') continue;
      // Every SQL text in the file: a string or template literal starting with a statement keyword.
      for (const [, , sql] of readFileSync(file, 'utf8').matchAll(/(['`])\s*((?:SELECT|UPDATE|INSERT|DELETE)\b[\s\S]*?)\1/g)) {
        if (/\b(UPDATE|INSERT INTO|DELETE FROM) sessions\b/.test(sql!)) offenders.push(`${name}: writes sessions: ${sql!.slice(0, 60)}`);
        const readsSessions = /\b(FROM|JOIN) sessions\b/.test(sql!);
        const columns =
          /\b(failed_at|failure_reason)\b/.test(sql!) ||
          (readsSessions && /\b(s\.)?(attempt|route)\b/.test(sql!.replace(/\bt\.(attempt|route)\b/g, '')));
        if (columns && !allowedReads.has(name))
          offenders.push(`${name}: attempt/failed_at/failure_reason/route in SQL: ${sql!.slice(0, 60)}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
