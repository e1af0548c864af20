import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson } from '../../api-stub/outbound/post-json.ts';
import { createServiceClient } from '../../sdk/browser/client.ts';
import { startSelfHostedWorker } from '../fakes/self-hosted-worker.ts';
import { createCertificateAuthority } from '../harness/pki.ts';
import { A, B, call, connect, HOSTED_KEY, newSession, startRoutingStack, WORKER_TOKEN, type RoutingStack } from './routing-harness.ts';

let stack: RoutingStack;
const auth = (sk: string) => ({ authorization: `Bearer ${sk}` });
const selfHostUrl = () => `${stack.url}/api/v2/workspace/self-host`;

beforeAll(async () => {
  stack = await startRoutingStack({ env: { SPAWN_TIMEOUT_MS: '1500' } });
});
afterAll(async () => {
  await stack?.stop();
});

describe('connect routing over real HTTPS', () => {
  it('sends a workspace with no endpoint to the hosted pipeline with the hosted key', async () => {
    const sessionId = await newSession(stack);
    const before = stack.hosted.requests.length;
    const res = await connect(stack, sessionId);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      room_url: expect.stringMatching(/^https:\/\/rooms\.hosted\.test\//),
      token: expect.any(String),
      transport: 'daily',
      sessionId,
      route: 'hosted',
    });
    const spawn = stack.hosted.requests.at(-1)!;
    expect(stack.hosted.requests.length).toBe(before + 1);
    expect(spawn.headers.authorization).toBe(`Bearer ${HOSTED_KEY}`);
    expect(spawn.authorized).toBe(true);
    // Only the session (with its attempt and its own report credential), the interview definition and
    // metadata travel; never a key of the service.
    expect(Object.keys(spawn.body!).sort()).toEqual([
      'attempt',
      'expiresAt',
      'interview',
      'interviewId',
      'metadata',
      'reportToken',
      'sessionId',
    ]);
    expect(spawn.body).toMatchObject({
      sessionId,
      attempt: 0,
      interviewId: A.dpl,
      metadata: { respondent: 'r-1' },
      interview: { title: 'Routing test' },
      reportToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    expect(spawn.rawBody).not.toMatch(/sk_|pk_|whsec_|hosted-key/);
    const session = await call('GET', `${stack.url}/api/v2/sdk/sessions/${sessionId}`, undefined, auth(A.sk));
    expect(session.body).toMatchObject({ status: 'STARTED', clickedAt: expect.any(String) });
  });

  it('setting the endpoint sends the next session to the self-hosted worker with its token; clearing sends it back', async () => {
    const put = await call('PUT', selfHostUrl(), { pipelineEndpoint: stack.worker.url, pipelineToken: WORKER_TOKEN }, auth(A.sk));
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ pipelineEndpoint: stack.worker.url, tokenSet: true });
    const got = await call('GET', selfHostUrl(), undefined, auth(A.sk));
    expect(got.body).toEqual({ pipelineEndpoint: stack.worker.url, tokenSet: true });
    expect(JSON.stringify(got.body)).not.toContain(WORKER_TOKEN);

    const selfHosted = await connect(stack, await newSession(stack));
    expect(selfHosted.status).toBe(200);
    expect(selfHosted.body.route).toBe('self_hosted');
    expect(selfHosted.body.room_url).toMatch(/^wss:\/\/worker\.selfhost\.test\/rooms\//);
    expect(selfHosted.body.transport).toBe('local');
    expect(stack.worker.requests.at(-1)!.headers.authorization).toBe(`Bearer ${WORKER_TOKEN}`);
    expect(stack.worker.requests.at(-1)!.rawBody).not.toContain(HOSTED_KEY);

    // The other workspace is untouched by alpha's settings.
    expect((await connect(stack, await newSession(stack, B), B)).body.route).toBe('hosted');

    const cleared = await call('DELETE', selfHostUrl(), undefined, auth(A.sk));
    expect(cleared.body).toEqual({ pipelineEndpoint: null, tokenSet: false });
    const workerCalls = stack.worker.requests.length;
    const back = await connect(stack, await newSession(stack));
    expect(back.body.route).toBe('hosted');
    expect(stack.worker.requests.length).toBe(workerCalls);
  });

  it('stores the token only encrypted: not in the database files, not in any log line, not in answers', async () => {
    await call('PUT', selfHostUrl(), { pipelineEndpoint: stack.worker.url, pipelineToken: WORKER_TOKEN }, auth(A.sk));
    await connect(stack, await newSession(stack));
    stack.worker.setBehaviour({ kind: 'status', status: 500 });
    const failed = await connect(stack, await newSession(stack));
    stack.worker.setBehaviour({ kind: 'ok' });
    expect(failed.status).toBe(502);
    expect(JSON.stringify(failed.body)).not.toContain(WORKER_TOKEN);
    stack.db.exec('PRAGMA wal_checkpoint(FULL)');
    const dir = dirname(stack.dbPath);
    for (const file of readdirSync(dir)) expect(readFileSync(join(dir, file)).includes(Buffer.from(WORKER_TOKEN)), file).toBe(false);
    const row = stack.db.prepare('SELECT pipeline_token_sealed FROM workspaces WHERE id = ?').get(A.ws)!;
    expect(String(row.pipeline_token_sealed)).toMatch(/^penv1:/);
    expect(stack.logs.length).toBeGreaterThan(0);
    expect(stack.logs.join('\n')).not.toContain(WORKER_TOKEN);
    expect(stack.logs.join('\n')).not.toContain(HOSTED_KEY);
    await call('DELETE', selfHostUrl(), undefined, auth(A.sk));
  });

  it('accepts only https:// endpoints, naming the field, and only with the secret key', async () => {
    const http = await call(
      'PUT',
      selfHostUrl(),
      { pipelineEndpoint: 'http://worker.example.com/', pipelineToken: WORKER_TOKEN },
      auth(A.sk),
    );
    expect(http.status).toBe(400);
    expect(http.body).toEqual({ error: 'invalid_request', message: expect.stringMatching(/^pipelineEndpoint: must be an https:\/\/ URL/) });
    const short = await call('PUT', selfHostUrl(), { pipelineEndpoint: 'https://worker.example.com/', pipelineToken: 'short' }, auth(A.sk));
    expect(short.body.message).toMatch(/^pipelineToken: must be at least 16/);
    expect(short.body.message).not.toContain('short"');
    expect(
      (
        await call(
          'PUT',
          selfHostUrl(),
          { pipelineEndpoint: 'https://w.example.com/', pipelineToken: WORKER_TOKEN },
          { authorization: `Bearer ${A.pk}` },
        )
      ).status,
    ).toBe(401);
    expect((await call('GET', selfHostUrl())).body.error).toBe('invalid_key');
    expect((await call('GET', selfHostUrl(), undefined, auth(A.sk))).body).toEqual({ pipelineEndpoint: null, tokenSet: false });
  });

  it('the stand-ins refuse wrong or missing tokens, and the client hears which side to fix', async () => {
    const ca = [stack.ca.certPem];
    const direct = (url: string, headers: Record<string, string>) =>
      postJson({
        url,
        body: '{"sessionId":"inv_direct"}',
        headers,
        signal: AbortSignal.timeout(2_000),
        httpsOnly: true,
        policy: { allowHosts: new Set(['127.0.0.1']) },
        ca,
      }).then((r) => r.status);
    for (const [server, good] of [
      [stack.worker, WORKER_TOKEN],
      [stack.hosted, HOSTED_KEY],
    ] as const) {
      expect(await direct(server.url, {})).toBe(401);
      expect(await direct(server.url, { authorization: 'Bearer wrong-token-000000000000' })).toBe(401);
      expect(await direct(server.url, { authorization: `Bearer ${good}` })).toBe(200);
    }
    await call('PUT', selfHostUrl(), { pipelineEndpoint: stack.worker.url, pipelineToken: 'not-the-worker-token-000' }, auth(A.sk));
    const refused = await connect(stack, await newSession(stack));
    expect(refused.status).toBe(502);
    expect(refused.body).toEqual({ error: 'worker_error', message: expect.stringMatching(/refused the service's credentials \(401\)/) });
    expect(stack.worker.requests.at(-1)!.authorized).toBe(false);
    expect(refused.body.message).not.toContain('not-the-worker-token');
    await call('DELETE', selfHostUrl(), undefined, auth(A.sk));
  });

  it('answers 504 worker_unreachable for a refused connection and for a worker the CA does not vouch for', async () => {
    const gone = await startSelfHostedWorker({ token: WORKER_TOKEN, tls: stack.ca.issueServer('gone') });
    await gone.refuse();
    await call('PUT', selfHostUrl(), { pipelineEndpoint: gone.url, pipelineToken: WORKER_TOKEN }, auth(A.sk));
    const refused = await connect(stack, await newSession(stack));
    expect(refused.status).toBe(504);
    expect(refused.body.error).toBe('worker_unreachable');
    expect(refused.body.message).toMatch(/unreachable\. Check the endpoint status in Settings → Server → Self-host/);
    expect(refused.body.message).not.toContain(WORKER_TOKEN);

    const strangerCa = createCertificateAuthority('stranger');
    const stranger = await startSelfHostedWorker({ token: WORKER_TOKEN, tls: strangerCa.issueServer('stranger') });
    await call('PUT', selfHostUrl(), { pipelineEndpoint: stranger.url, pipelineToken: WORKER_TOKEN }, auth(A.sk));
    const tls = await connect(stack, await newSession(stack));
    expect(tls.status).toBe(504);
    expect(tls.body.message).toMatch(/\(tls\)$/);
    expect(stranger.requests).toHaveLength(0);
    await stranger.close();
    await call('DELETE', selfHostUrl(), undefined, auth(A.sk));
  });

  it('502 for a worker answering malformed JSON, 503 no_capacity passed on with Retry-After', async () => {
    stack.hosted.setBehaviour({ kind: 'malformed' });
    const bad = await connect(stack, await newSession(stack));
    expect(bad.status).toBe(502);
    expect(bad.body.message).toMatch(/without a valid \{room_url, token\}/);
    stack.hosted.setBehaviour({ kind: 'status', status: 503 });
    const full = await connect(stack, await newSession(stack));
    expect(full.status).toBe(503);
    expect(full.body.error).toBe('no_capacity');
    expect(full.headers.get('retry-after')).toBe('5');
    stack.hosted.setBehaviour({ kind: 'ok' });
  });

  it('passes on the transport the worker names; a worker that names none still connects; an unknown one is a 502', async () => {
    stack.hosted.setBehaviour({ kind: 'answer', fields: { transport: undefined } });
    const older = await connect(stack, await newSession(stack));
    expect(older.status).toBe(200);
    // No guess here: the page guesses from the address (docs/connect.md, "transport").
    expect(older.body).not.toHaveProperty('transport');
    expect(older.body.room_url).toMatch(/^https:\/\//);
    stack.hosted.setBehaviour({ kind: 'answer', fields: { transport: 'pigeon' } });
    const unknown = await connect(stack, await newSession(stack));
    expect(unknown.status).toBe(502);
    expect(unknown.body).toEqual({
      error: 'worker_error',
      message: expect.stringMatching(/transport the respondent's page cannot open \(expected one of livekit, daily, local\)/),
    });
    stack.hosted.setBehaviour({ kind: 'ok' });
  });

  it('reconnects a STARTED session to the same room, and refuses completed, expired and foreign sessions', async () => {
    const sessionId = await newSession(stack);
    const first = await connect(stack, sessionId);
    const again = await connect(stack, sessionId);
    expect(again.status).toBe(200);
    expect(again.body.room_url).toBe(first.body.room_url);
    expect((await connect(stack, sessionId, B)).status).toBe(403);
    const wrongInterview = await call('POST', `${stack.url}/api/v2/sdk/connect`, {
      publishableKey: A.pk,
      interviewId: 'dpl_nope',
      sessionId,
    });
    expect(wrongInterview.body.error).toBe('interview_not_found');
    expect(
      (await call('POST', `${stack.url}/api/v2/sdk/connect`, { publishableKey: A.pk, interviewId: A.dpl, sessionId: 'inv_missing' })).body
        .error,
    ).toBe('session_not_found');
    expect(
      (await call('POST', `${stack.url}/api/v2/sdk/connect`, { publishableKey: 'pk_test_unknown00000000', interviewId: A.dpl, sessionId }))
        .status,
    ).toBe(401);
    expect(
      (await call('POST', `${stack.url}/api/v2/sdk/connect`, { publishableKey: A.pk, interviewId: A.dpl, sessionId: 42 })).body.message,
    ).toMatch(/^sessionId/);
    stack.db.prepare("UPDATE sessions SET status = 'EXPIRED' WHERE id = ?").run(sessionId);
    const expired = await connect(stack, sessionId);
    expect(expired.status).toBe(409);
    expect(expired.body.error).toBe('session_not_connectable');
  });
});

describe("connect with the spec's body (no sessionId)", () => {
  const specConnect = (body: Record<string, unknown>) => call('POST', `${stack.url}/api/v2/sdk/connect`, body);

  it('creates the session with its metadata, connects it, and answers its id with room_url and token', async () => {
    const res = await specConnect({ interviewId: A.dpl, publishableKey: A.pk, metadata: { crm: 'c-7', tags: ['a'] } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      room_url: expect.stringMatching(/^https:\/\//),
      token: expect.any(String),
      transport: 'daily',
      sessionId: expect.stringMatching(/^inv_/),
      route: 'hosted',
    });
    const session = await call('GET', `${stack.url}/api/v2/sdk/sessions/${res.body.sessionId}`, undefined, auth(A.sk));
    expect(session.body).toMatchObject({
      id: res.body.sessionId,
      interviewId: A.dpl,
      status: 'STARTED',
      metadata: { crm: 'c-7', tags: ['a'] },
    });
    // The spawn carried the stored metadata.
    expect(stack.hosted.requests.at(-1)!.body).toMatchObject({ sessionId: res.body.sessionId, metadata: { crm: 'c-7', tags: ['a'] } });
    // Without metadata: stored as {}.
    const bare = await specConnect({ interviewId: A.dpl, publishableKey: A.pk });
    expect(bare.status).toBe(200);
    expect((await call('GET', `${stack.url}/api/v2/sdk/sessions/${bare.body.sessionId}`, undefined, auth(A.sk))).body.metadata).toEqual({});
  });

  it("the browser SDK's connect sends the spec's body and returns the room", async () => {
    const client = createServiceClient({ publishableKey: A.pk, baseUrl: stack.url });
    const room = await client.connect({ interviewId: A.dpl, metadata: { from: 'sdk' } });
    expect(room).toEqual({
      sessionId: expect.stringMatching(/^inv_/),
      room_url: expect.stringMatching(/^https:\/\//),
      token: expect.any(String),
      transport: 'daily',
    });
    expect(stack.hosted.requests.at(-1)!.body).toMatchObject({ sessionId: room.sessionId, metadata: { from: 'sdk' } });
    const again = await client.connect({ interviewId: A.dpl, sessionId: room.sessionId });
    expect(again.room_url).toBe(room.room_url);
    await expect(client.connect({ interviewId: 'dpl_nope' })).rejects.toMatchObject({
      name: 'ServiceError',
      status: 404,
      code: 'interview_not_found',
    });
  });

  it('answers the same errors as session creation, and creates nothing on a refusal', async () => {
    const count = () => Number(stack.db.prepare('SELECT count(*) AS n FROM sessions').get()!.n);
    const before = count();
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ interviewId: A.dpl }, 401, 'invalid_key'],
      [{ interviewId: A.dpl, publishableKey: A.sk }, 401, 'invalid_key'],
      [{ interviewId: 'dpl_nope', publishableKey: A.pk }, 404, 'interview_not_found'],
      [{ interviewId: 'not-a-dpl', publishableKey: A.pk }, 404, 'interview_not_found'],
      [{ interviewId: B.dpl, publishableKey: A.pk }, 403, 'cross_workspace'],
      [{ interviewId: A.dpl, publishableKey: A.pk, metadata: [1] }, 400, 'invalid_request'],
      [{ interviewId: A.dpl, publishableKey: A.pk, metadata: { s: 'x'.repeat(20_000) } }, 400, 'invalid_request'],
      [{ interviewId: A.dpl, publishableKey: A.pk, extra: 1 }, 400, 'invalid_request'],
      [{ interviewId: 'not-a-dpl', publishableKey: A.pk, sessionId: 'inv_abc' }, 400, 'invalid_request'],
    ];
    for (const [body, status, code] of cases) {
      const res = await specConnect(body);
      expect([res.status, res.body.error], JSON.stringify(body).slice(0, 80)).toEqual([status, code]);
      expect(typeof res.body.message).toBe('string');
    }
    const creation = await call('POST', `${stack.url}/api/v2/sdk/sessions`, { interviewId: 'dpl_nope', publishableKey: A.pk });
    expect(creation.body).toEqual((await specConnect({ interviewId: 'dpl_nope', publishableKey: A.pk })).body);
    expect(count()).toBe(before);
  });
});

describe("connect with the session link's own capability (sessionUrl alone)", () => {
  it("connects with sessionToken from the link's fragment and no publishable key; a wrong token or an unknown session is the same 401", async () => {
    const created = await call('POST', `${stack.url}/api/v2/sdk/sessions`, { publishableKey: A.pk, interviewId: A.dpl });
    const url = new URL(created.body.sessionUrl as string);
    const token = new URLSearchParams(url.hash.slice(1)).get('k')!;
    const sessionId = created.body.sessionId as string;
    const viaLink = (body: Record<string, unknown>) => call('POST', `${stack.url}/api/v2/sdk/connect`, { interviewId: A.dpl, ...body });
    const other = await newSession(stack);
    const wrong = await viaLink({ sessionId, sessionToken: 'x'.repeat(43) });
    expect([wrong.status, wrong.body.error]).toEqual([401, 'invalid_token']);
    expect((await viaLink({ sessionId: other, sessionToken: token })).body).toEqual(wrong.body);
    expect((await viaLink({ sessionId: 'inv_doesnotexist', sessionToken: token })).body).toEqual(wrong.body);
    expect((await viaLink({ sessionToken: token })).body).toMatchObject({
      error: 'invalid_request',
      message: expect.stringMatching(/^sessionId: required with sessionToken/),
    });
    const ok = await viaLink({ sessionId, sessionToken: token });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body).toMatchObject({ sessionId, route: 'hosted', room_url: expect.any(String), token: expect.any(String) });
    expect(stack.db.prepare('SELECT status FROM sessions WHERE id = ?').get(sessionId)!.status).toBe('STARTED');
  });
});

describe('workspace rate caps on connect', () => {
  it('counts connect against the per-second cap like every API call', async () => {
    const capped = await startRoutingStack({ env: { RATE_CAP_PER_SECOND: '2' } });
    try {
      capped.clock.now = Date.now();
      const sessionId = await newSession(capped);
      expect((await connect(capped, sessionId)).status).toBe(200);
      const refused = await connect(capped, sessionId);
      expect(refused.status).toBe(429);
      expect(refused.body.error).toBe('rate_limit_exceeded');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      capped.clock.now += 1_000;
      expect((await connect(capped, sessionId)).status).toBe(200);
    } finally {
      await capped.stop();
    }
  });
});
