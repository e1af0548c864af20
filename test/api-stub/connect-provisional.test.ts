import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pendingCount } from '../../api-stub/webhooks/outbox-store.ts';
import { createServiceClient, ServiceError } from '../../sdk/browser/client.ts';
import { A, call, newSession, startRoutingStack, type RoutingStack } from './routing-harness.ts';

/**
 * Connect with the spec's body (`{interviewId, publishableKey, metadata}`) creates its session. When
 * the spawn then fails, the error names that session so that the retry reaches it, and a session no
 * bot ever took is no customer's event: at its expiry it is deleted without a session.expired
 * (docs/session-states.md, "Provisional sessions"; docs/connect.md, "When a connect fails").
 */
let stack: RoutingStack;
beforeAll(async () => {
  stack = await startRoutingStack({ env: { SPAWN_TIMEOUT_MS: '1500', HOSTED_SESSIONS_PER_WORKSPACE: '1000' } });
});
afterAll(async () => {
  await stack?.stop();
});

const specConnect = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  call('POST', `${stack.url}/api/v2/sdk/connect`, { publishableKey: A.pk, interviewId: A.dpl, ...body }, headers);
const retrieve = (id: string) => call('GET', `${stack.url}/api/v2/sdk/sessions/${id}`, undefined, { authorization: `Bearer ${A.sk}` });
const sessionCount = () => Number(stack.db.prepare('SELECT count(*) AS n FROM sessions').get()!.n);
const eventsFor = (sessionId: string) =>
  stack.receiver.received
    .map((r) => JSON.parse(r.rawBody) as { type: string; data: { sessionId?: string } })
    .filter((e) => e.data.sessionId === sessionId);

async function settled(): Promise<void> {
  await expect.poll(() => pendingCount(stack.db) === 0 && stack.runtime.dispatcher.inFlight() === 0, { timeout: 5_000 }).toBe(true);
}

describe('a connect that created its session and failed', () => {
  it('names the session in the error (503, 502, 504), and the retry with it connects that same session', async () => {
    const failures: Array<[Parameters<RoutingStack['hosted']['setBehaviour']>[0], number, string]> = [
      [{ kind: 'status', status: 503 }, 503, 'no_capacity'],
      [{ kind: 'status', status: 500 }, 502, 'worker_error'],
      [{ kind: 'hang' }, 504, 'worker_unreachable'],
    ];
    for (const [behaviour, status, code] of failures) {
      stack.hosted.setBehaviour(behaviour);
      const before = sessionCount();
      let failed;
      try {
        failed = await specConnect({ metadata: { crm: code } });
      } finally {
        stack.hosted.setBehaviour({ kind: 'ok' });
      }
      expect(failed.status).toBe(status);
      expect(failed.body).toEqual({ error: code, message: expect.any(String), sessionId: expect.stringMatching(/^inv_/) });
      if (status === 503) expect(failed.headers.get('retry-after')).toBe('5');
      const sessionId = failed.body.sessionId as string;
      expect(sessionCount()).toBe(before + 1);
      // Nobody opened a page and no bot took it: still PENDING, not CLICKED.
      expect((await retrieve(sessionId)).body).toMatchObject({ id: sessionId, status: 'PENDING', clickedAt: null });

      const retried = await specConnect({ sessionId, metadata: {} });
      expect(retried.status).toBe(200);
      expect(retried.body.sessionId).toBe(sessionId);
      expect(sessionCount()).toBe(before + 1);
      const session = (await retrieve(sessionId)).body;
      expect(session).toMatchObject({ id: sessionId, status: 'STARTED', metadata: { crm: code }, clickedAt: expect.stringMatching(/Z$/) });
    }
  });

  it('binds retries with the same Idempotency-Key to one session', async () => {
    const before = sessionCount();
    const headers = { 'idempotency-key': 'connect-retry-0001' };
    stack.hosted.setBehaviour({ kind: 'status', status: 503 });
    let first;
    let second;
    try {
      first = await specConnect({ metadata: { crm: 'idem' } }, headers);
      second = await specConnect({ metadata: { crm: 'idem' } }, headers);
    } finally {
      stack.hosted.setBehaviour({ kind: 'ok' });
    }
    expect([first.status, second.status]).toEqual([503, 503]);
    expect(second.body.sessionId).toBe(first.body.sessionId);
    const third = await specConnect({ metadata: { crm: 'idem' } }, headers);
    expect(third.status).toBe(200);
    expect(third.body.sessionId).toBe(first.body.sessionId);
    expect(sessionCount()).toBe(before + 1);
  });

  it('the browser SDK retries the session its failed connect created', async () => {
    const client = createServiceClient({ publishableKey: A.pk, baseUrl: stack.url });
    const input = { interviewId: A.dpl, metadata: { crm: 'sdk-retry' } };
    stack.hosted.setBehaviour({ kind: 'status', status: 503 });
    let error: unknown;
    try {
      error = await client.connect(input).catch((err: unknown) => err);
      // A second failure goes to the same session, not a new one.
      await expect(client.connect(input)).rejects.toMatchObject({ code: 'no_capacity' });
    } finally {
      stack.hosted.setBehaviour({ kind: 'ok' });
    }
    expect(error).toBeInstanceOf(ServiceError);
    const named = (error as ServiceError).sessionId;
    expect(named).toMatch(/^inv_/);
    const before = sessionCount();
    const room = await client.connect(input);
    expect(room.sessionId).toBe(named);
    expect(sessionCount()).toBe(before);
    // Once connected, the next connect() with the same input is a new interview.
    expect((await client.connect(input)).sessionId).not.toBe(named);
  });

  it('refused for capacity and never retried: deleted at expiry, no session.expired; a session created by the API still fires it', async () => {
    const ids = () =>
      new Set(
        stack.db
          .prepare('SELECT id FROM sessions')
          .all()
          .map((r) => String(r.id)),
      );
    const existing = ids();
    stack.hosted.setBehaviour({ kind: 'status', status: 503 });
    try {
      for (let i = 0; i < 10; i += 1) expect((await specConnect({ metadata: { crm: `busy-${i}` } })).status).toBe(503);
    } finally {
      stack.hosted.setBehaviour({ kind: 'ok' });
    }
    const refused = [...ids()].filter((id) => !existing.has(id));
    expect(refused).toHaveLength(10);
    const offered = await newSession(stack);
    await settled();
    stack.clock.now = Date.now() + 2 * 86_400_000;
    try {
      stack.runtime.sweeper.sweep();
      await settled();
      await expect.poll(() => eventsFor(offered).map((e) => e.type), { timeout: 5_000 }).toEqual(['session.expired']);
      for (const id of refused) {
        expect(eventsFor(id)).toEqual([]);
        expect((await retrieve(id)).status).toBe(404);
      }
      expect(
        Number(stack.db.prepare(`SELECT count(*) AS n FROM sessions WHERE id IN (${refused.map(() => '?').join(',')})`).get(...refused)!.n),
      ).toBe(0);
      // Its retry now finds nothing to connect.
      expect((await specConnect({ sessionId: refused[0] })).body.error).toBe('session_not_found');
    } finally {
      stack.clock.now = null;
    }
  });

  it('a session that a bot took is an interview like any other: its expiry is reported', async () => {
    const res = await specConnect({ metadata: { crm: 'taken' } });
    expect(res.status).toBe(200);
    const sessionId = res.body.sessionId as string;
    stack.clock.now = Date.now() + 5 * 86_400_000;
    try {
      stack.runtime.sweeper.sweep();
      await settled();
      await expect.poll(() => eventsFor(sessionId).map((e) => e.type), { timeout: 5_000 }).toEqual(['session.expired']);
      expect((await retrieve(sessionId)).body.status).toBe('EXPIRED');
    } finally {
      stack.clock.now = null;
    }
  });
});
