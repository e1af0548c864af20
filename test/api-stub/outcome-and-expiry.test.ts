import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../api-stub/db/database.ts';
import { createSweeper } from '../../api-stub/sessions/sweeper.ts';
import { pendingCount } from '../../api-stub/webhooks/outbox-store.ts';
import { silentLogger } from '../../lib/log.ts';
import { constructEvent } from '../../sdk/server/webhooks.ts';
import {
  A,
  B,
  call,
  connect,
  HOSTED_KEY,
  newSession,
  reportTokenOf,
  startRoutingStack,
  WHSEC,
  WORKER_TOKEN,
  type RoutingStack,
} from './routing-harness.ts';

let stack: RoutingStack;
const outcomeUrl = (id: string) => `${stack.url}/api/v2/worker/sessions/${id}/outcome`;
/** A worker's outcome report, by default with the reportToken of the session's latest spawn call (C1). */
const report = (id: string, body: unknown, bearer: string | null = reportTokenOf([stack.hosted, stack.worker], id)) =>
  call('POST', outcomeUrl(id), body, bearer === null ? {} : { authorization: `Bearer ${bearer}` });
const completed = {
  status: 'completed',
  response: { transcriptKey: 's3://transcripts/inv/1.json', summary: 'Liked onboarding; pricing unclear.' },
};
const failed = { status: 'failed', reason: 'llm_timeout', message: 'The language model did not answer within 20 s.' };

/** Webhooks received for one session, verified with the SDK against the clock the api-stub signs with. */
function eventsFor(sessionId: string) {
  return stack.receiver.received
    .filter((r) => (JSON.parse(r.rawBody) as { data: { sessionId?: string } }).data.sessionId === sessionId)
    .map((r) => constructEvent(r.rawBody, String(r.headers['service-signature']), WHSEC, 300, { now: () => stack.clock() }));
}

async function settled(): Promise<void> {
  await expect.poll(() => pendingCount(stack.db) === 0 && stack.runtime.dispatcher.inFlight() === 0, { timeout: 10_000 }).toBe(true);
}

async function started(who: typeof A | typeof B = A): Promise<string> {
  const id = await newSession(stack, who, { crm: 'c-42' });
  expect((await connect(stack, id, who)).status).toBe(200);
  return id;
}

beforeAll(async () => {
  stack = await startRoutingStack({ env: { WEBHOOK_TIMEOUT_MS: '4000' } });
});
afterAll(async () => {
  await stack?.stop();
});

describe('outcome reports', () => {
  it('completed: COMPLETED with completedAt and response, interview.completed once even when reported twice', async () => {
    const id = await started();
    const first = await report(id, completed);
    expect(first).toMatchObject({ status: 200, body: { sessionId: id, status: 'COMPLETED' } });
    const session = (await call('GET', `${stack.url}/api/v2/sdk/sessions/${id}`, undefined, { authorization: `Bearer ${A.sk}` })).body;
    expect(session).toMatchObject({
      status: 'COMPLETED',
      completedAt: expect.stringMatching(/Z$/),
      response: { id: expect.stringMatching(/^rsp_/), status: 'COMPLETED', ...completed.response },
    });
    await expect.poll(() => eventsFor(id).length, { timeout: 5_000 }).toBe(1);
    const [event] = eventsFor(id);
    expect(event).toMatchObject({
      type: 'interview.completed',
      data: { sessionId: id, interviewId: A.dpl, metadata: { crm: 'c-42' }, completedAt: session.completedAt },
    });
    expect(Object.keys(event!.data).sort()).toEqual(['completedAt', 'interviewId', 'metadata', 'sessionId']);

    const again = await report(id, completed);
    expect(again).toMatchObject({ status: 200, body: { status: 'COMPLETED' } });
    await settled();
    expect(eventsFor(id)).toHaveLength(1);
    expect((await report(id, failed)).body.error).toBe('outcome_conflict');
  });

  it('failed: the session stays STARTED, interview.failed once; a later completed report is a conflict', async () => {
    const id = await started();
    expect((await report(id, failed)).body).toEqual({ sessionId: id, status: 'STARTED' });
    expect((await report(id, failed)).body).toEqual({ sessionId: id, status: 'STARTED' });
    await expect.poll(() => eventsFor(id).length, { timeout: 5_000 }).toBe(1);
    await settled();
    expect(eventsFor(id)).toHaveLength(1);
    expect(eventsFor(id)[0]).toMatchObject({
      type: 'interview.failed',
      data: { sessionId: id, reason: 'llm_timeout', message: failed.message, failedAt: expect.stringMatching(/Z$/) },
    });
    const late = await report(id, completed);
    expect(late.status).toBe(409);
    expect(late.body).toEqual({ error: 'outcome_conflict', message: expect.stringMatching(/already reported as failed/) });
  });

  it('a connect after a failure opens a new attempt: it may fail again (a second interview.failed) and then complete', async () => {
    const id = await started();
    const spawnsOf = () =>
      stack.hosted.requests
        .filter((r) => (r.body as { sessionId?: string }).sessionId === id)
        .map((r) => (r.body as { attempt: number }).attempt);
    expect((await report(id, failed)).status).toBe(200);
    expect((await connect(stack, id)).status).toBe(200);
    // A late copy of the first attempt's report, arriving after the retry began, changes nothing.
    expect((await report(id, { ...completed, attempt: 0 })).body).toEqual({ sessionId: id, status: 'STARTED' });
    const second = { ...failed, reason: 'tts_error' };
    expect((await report(id, second)).body).toEqual({ sessionId: id, status: 'STARTED' });
    expect((await report(id, second)).status).toBe(200);
    expect((await connect(stack, id)).status).toBe(200);
    expect((await report(id, { ...completed, attempt: 2 })).body).toEqual({ sessionId: id, status: 'COMPLETED' });
    // Each spawn told the worker which attempt it serves.
    expect(spawnsOf()).toEqual([0, 1, 2]);
    await expect.poll(() => eventsFor(id).length, { timeout: 5_000 }).toBe(3);
    await settled();
    const events = eventsFor(id);
    // Deliveries run concurrently, so compare without order.
    expect(events.map((e) => `${e.type} ${(e.data as { reason?: string }).reason ?? ''}`).sort()).toEqual([
      'interview.completed ',
      'interview.failed llm_timeout',
      'interview.failed tts_error',
    ]);
  });

  it('never waits for webhook delivery: reports answer at once while the receiver hangs', async () => {
    stack.receiver.setMode({ kind: 'hang' });
    try {
      const ids = await Promise.all([started(), started(), started()]);
      for (const id of ids) {
        const res = await report(id, completed);
        expect(res.status).toBe(200);
        expect(res.ms).toBeLessThan(3500); // under the hung receiver's WEBHOOK_TIMEOUT_MS (4 s), with room for a loaded machine
      }
      await expect.poll(() => stack.runtime.dispatcher.inFlight(), { timeout: 3_000 }).toBe(3);
      const create = await call('POST', `${stack.url}/api/v2/sdk/sessions`, { publishableKey: A.pk, interviewId: A.dpl });
      expect(create.status).toBe(201);
      expect(create.ms).toBeLessThan(3500);
    } finally {
      stack.receiver.setMode({ kind: 'status', status: 200 });
    }
    await settled(); // the hung attempts time out after WEBHOOK_TIMEOUT_MS and are logged
  });

  it("authenticates with the session's own report token, checked before anything says whether the session exists", async () => {
    const hosted = await started();
    const other = await started();
    const token = reportTokenOf([stack.hosted], hosted);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await report(hosted, completed, null)).status).toBe(401);
    // Neither the spawn's own bearer nor another session's report token will do.
    for (const wrong of [HOSTED_KEY, WORKER_TOKEN, reportTokenOf([stack.hosted], other)]) {
      expect((await report(hosted, completed, wrong)).body.error).toBe('invalid_token');
    }
    // Only the digest is stored.
    expect(JSON.stringify(stack.db.prepare('SELECT * FROM report_tokens').all())).not.toContain(token);

    // An unknown session, a never-spawned one and a wrong token all get the same 401.
    const neverStarted = await newSession(stack);
    const unknown = await report('inv_doesnotexist', completed, token);
    const notAnId = await report('not-a-session', completed, token);
    const wrong = await report(hosted, completed, 'x'.repeat(43));
    expect((await report(neverStarted, completed, token)).body).toEqual(wrong.body);
    expect([unknown.status, unknown.body]).toEqual([401, wrong.body]);
    expect([notAnId.status, notAnId.body]).toEqual([401, wrong.body]);

    const bad = await report(hosted, { status: 'completed', response: { summary: 'x' } });
    expect(bad).toMatchObject({
      status: 400,
      body: { error: 'invalid_request', message: expect.stringMatching(/^response\.transcriptKey/) },
    });
    expect((await report(hosted, completed, token)).body.status).toBe('COMPLETED');
    expect(stack.logs.join('\n')).not.toContain(token);
  });

  it("rotating and then clearing the workspace's self-host token mid-interview: the reports still land and the webhooks fire", async () => {
    const selfHostUrl = `${stack.url}/api/v2/workspace/self-host`;
    const sk = { authorization: `Bearer ${A.sk}` };
    expect((await call('PUT', selfHostUrl, { pipelineEndpoint: stack.worker.url, pipelineToken: WORKER_TOKEN }, sk)).status).toBe(200);
    const first = await started();
    const second = await started();
    expect(stack.db.prepare('SELECT route FROM sessions WHERE id = ?').get(first)!.route).toBe('self_hosted');
    // Mid-interview, the operator rotates the worker token…
    expect(
      (await call('PUT', selfHostUrl, { pipelineEndpoint: stack.worker.url, pipelineToken: 'worker-token-rotated-0000000000' }, sk)).status,
    ).toBe(200);
    expect((await report(first, completed)).body).toEqual({ sessionId: first, status: 'COMPLETED' });
    // …and then clears the self-host endpoint altogether.
    expect((await call('DELETE', selfHostUrl, undefined, sk)).status).toBe(200);
    expect((await report(second, failed)).body).toEqual({ sessionId: second, status: 'STARTED' });
    await expect.poll(() => eventsFor(first).length + eventsFor(second).length, { timeout: 5_000 }).toBe(2);
    expect(eventsFor(first)[0]).toMatchObject({ type: 'interview.completed', data: { sessionId: first } });
    expect(eventsFor(second)[0]).toMatchObject({ type: 'interview.failed', data: { sessionId: second, reason: 'llm_timeout' } });
  });
});

describe('a session expiring mid-interview (contract C5)', () => {
  const expiresAtOf = (id: string) => Number(stack.db.prepare('SELECT expires_at FROM sessions WHERE id = ?').get(id)!.expires_at);
  const statusOf = (id: string) => String(stack.db.prepare('SELECT status FROM sessions WHERE id = ?').get(id)!.status);

  it('a STARTED session survives expiresAt: connect is refused, the completed report lands and interview.completed fires, no session.expired', async () => {
    const talking = await started();
    const idle = await newSession(stack);
    const failedThenLate = await started();
    expect((await report(failedThenLate, failed)).status).toBe(200);
    // One hour past expiresAt, the respondent is still talking.
    stack.clock.now = expiresAtOf(talking) + 3_600_000;
    try {
      stack.runtime.sweeper.sweep();
      expect(statusOf(idle)).toBe('EXPIRED');
      expect(statusOf(talking)).toBe('STARTED');
      // A new connect (a reconnect, or a retry after a failure) after expiresAt is refused.
      for (const id of [talking, failedThenLate]) {
        const again = await connect(stack, id);
        expect([again.status, again.body.error]).toEqual([409, 'session_not_connectable']);
      }
      expect((await report(talking, completed)).body).toEqual({ sessionId: talking, status: 'COMPLETED' });
      stack.runtime.sweeper.sweep();
      await expect.poll(() => eventsFor(talking).map((e) => e.type), { timeout: 5_000 }).toEqual(['interview.completed']);
      await settled();
      expect(eventsFor(talking).map((e) => e.type)).toEqual(['interview.completed']);
      expect(eventsFor(idle).map((e) => e.type)).toEqual(['session.expired']);
      expect(statusOf(failedThenLate)).toBe('STARTED');
    } finally {
      stack.clock.now = null;
    }
  });

  it('a STARTED session with no completed report expires at expiresAt + STARTED_SESSION_GRACE_SECONDS; a report after that is refused', async () => {
    expect(stack.config.routing.startedSessionGraceSeconds).toBe(86_400);
    const silent = await started();
    stack.clock.now = expiresAtOf(silent) + 86_400_000 - 1_000;
    try {
      stack.runtime.sweeper.sweep();
      expect(statusOf(silent)).toBe('STARTED');
      stack.clock.now = expiresAtOf(silent) + 86_400_000;
      stack.runtime.sweeper.sweep();
      expect(statusOf(silent)).toBe('EXPIRED');
      await expect.poll(() => eventsFor(silent).map((e) => e.type), { timeout: 5_000 }).toEqual(['session.expired']);
      expect(eventsFor(silent)[0]!.data).toMatchObject({ lastStatus: 'STARTED' });
      const late = await report(silent, completed);
      expect(late).toMatchObject({ status: 409, body: { error: 'outcome_conflict', message: 'The session has expired.' } });
    } finally {
      stack.clock.now = null;
    }
  });
});

describe('expiry', () => {
  it('the sweeper expires overdue sessions once (two sweepers), fires session.expired, and later reports and connects are refused', async () => {
    const clicked = await newSession(stack);
    expect((await fetch(`${stack.url}/s/${clicked}`)).status).toBe(200);
    const running = await started();
    stack.clock.now = Date.now() + 3 * 86_400_000;
    const second = openDatabase(stack.dbPath);
    const other = createSweeper({ db: second, clock: stack.clock, log: silentLogger, intervalMs: 60_000 });
    const counts = [stack.runtime.sweeper.sweep(), other.sweep(), stack.runtime.sweeper.sweep()];
    second.close();
    expect(counts[0]).toBeGreaterThanOrEqual(2);
    expect(counts.slice(1)).toEqual([0, 0]);
    await expect.poll(() => eventsFor(running).length + eventsFor(clicked).length, { timeout: 5_000 }).toBe(2);
    await settled();
    const [expired] = eventsFor(clicked);
    expect(expired).toMatchObject({
      type: 'session.expired',
      data: {
        sessionId: clicked,
        interviewId: A.dpl,
        lastStatus: 'CLICKED',
        expiredAt: expect.stringMatching(/Z$/),
        expiresAt: expect.stringMatching(/Z$/),
      },
    });
    expect(eventsFor(running)[0]!.data).toMatchObject({ lastStatus: 'STARTED' });

    const late = await report(running, completed);
    expect(late).toMatchObject({ status: 409, body: { error: 'outcome_conflict', message: 'The session has expired.' } });
    expect((await connect(stack, running)).status).toBe(409);
    stack.clock.now = null;
  });
});

describe('the delivery log endpoint', () => {
  it("lists the key's workspace attempts newest first, paged by cursor, secret key only", async () => {
    const betaSession = await started(B);
    expect((await report(betaSession, completed)).status).toBe(200);
    await settled();
    const url = `${stack.url}/api/v2/workspace/webhook-deliveries`;
    const all = await call('GET', url, undefined, { authorization: `Bearer ${A.sk}` });
    expect(all.status).toBe(200);
    expect(all.body.data.length).toBeGreaterThanOrEqual(3);
    expect(all.body.data[0]).toEqual({
      id: expect.stringMatching(/^del_/),
      eventId: expect.stringMatching(/^evt_/),
      eventType: expect.any(String),
      endpointUrl: stack.receiver.url,
      attempt: 1,
      statusCode: 200,
      durationMs: expect.any(Number),
      error: null,
      responseBody: 'ok',
      outcome: 'delivered',
      createdAt: expect.stringMatching(/Z$/),
    });
    const times = all.body.data.map((d: { createdAt: string }) => d.createdAt);
    expect([...times].sort().reverse()).toEqual(times);
    const page1 = await call('GET', `${url}?limit=1`, undefined, { authorization: `Bearer ${A.sk}` });
    const page2 = await call('GET', `${url}?limit=1&cursor=${page1.body.nextCursor}`, undefined, { authorization: `Bearer ${A.sk}` });
    expect(page1.body.data[0].id).toBe(all.body.data[0].id);
    expect(page2.body.data[0].id).toBe(all.body.data[1].id);
    const beta = await call('GET', url, undefined, { authorization: `Bearer ${B.sk}` });
    expect(beta.body.data.map((d: { eventType: string }) => d.eventType)).toEqual(['interview.completed']);
    expect(
      (await call('GET', `${url}?eventId=${beta.body.data[0].eventId}`, undefined, { authorization: `Bearer ${A.sk}` })).body.data,
    ).toEqual([]);
    expect((await call('GET', url, undefined, { authorization: `Bearer ${A.pk}` })).status).toBe(401);
    expect((await call('GET', `${url}?limit=0`, undefined, { authorization: `Bearer ${A.sk}` })).body.message).toMatch(/^limit/);
    expect((await call('GET', `${url}?cursor=zzz`, undefined, { authorization: `Bearer ${A.sk}` })).body.message).toMatch(/^cursor/);
  });
});
