import { afterEach, describe, expect, it } from 'vitest';
import { startApiStub, testSeed, K, post, get, type RunningApiStub } from './harness.ts';

describe('rate caps per workspace', () => {
  let stub: RunningApiStub | undefined;
  afterEach(async () => {
    await stub?.stop();
    stub = undefined;
  });
  const create = (s: RunningApiStub, pk: string = K.pk, interviewId: string = K.active) =>
    post(`${s.url}/api/v2/sdk/sessions`, { publishableKey: pk, interviewId });

  it('enforces the service cap (per second) with 429, Retry-After and the RateLimit headers, then lets calls through in the next second', async () => {
    stub = await startApiStub({ seed: testSeed(), env: { RATE_CAP_PER_SECOND: '3', RATE_CAP_HOURLY: '100' } });
    stub.clock.now = Date.parse('2026-11-23T10:00:00.200Z');
    const ok = await create(stub);
    expect(ok.status).toBe(201);
    expect(ok.headers.get('ratelimit-policy')).toBe('"hourly";q=100;w=3600, "burst";q=3;w=1');
    expect(ok.headers.get('ratelimit')).toBe('"hourly";r=99;t=3600, "burst";r=2;t=1');
    expect((await create(stub)).status).toBe(201);
    expect((await create(stub)).status).toBe(201);
    const before = Number(stub.db.prepare('SELECT COUNT(*) AS n FROM sessions').get()!.n);
    const refused = await create(stub);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toBe('rate_limit_exceeded');
    expect(refused.body.message).toMatch(/service cap/);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.headers.get('ratelimit')).toBe('"hourly";r=97;t=3600, "burst";r=0;t=1');
    expect(refused.headers.get('access-control-allow-origin')).toBe('*');
    expect(Number(stub.db.prepare('SELECT COUNT(*) AS n FROM sessions').get()!.n)).toBe(before);
    // Retrieval (a secret-key call) draws on its own budget: the publishable-key calls cannot lock it out.
    const id = ok.body.sessionId as string;
    expect((await get(`${stub.url}/api/v2/sdk/sessions/${id}`, { Authorization: `Bearer ${K.sk}` })).status).toBe(200);
    // Another workspace is not affected.
    expect((await create(stub, K.otherPk, K.otherActive)).status).toBe(201);
    stub.clock.now += 1000;
    expect((await create(stub)).status).toBe(201);
  });

  it('enforces the hourly cap with Retry-After up to the end of the clock hour, and keeps counting across a restart', async () => {
    stub = await startApiStub({ seed: testSeed(), env: { RATE_CAP_PER_SECOND: '100', RATE_CAP_HOURLY: '3' } });
    stub.clock.now = Date.parse('2026-11-23T10:45:00Z');
    expect((await create(stub)).status).toBe(201);
    expect((await create(stub)).status).toBe(201);
    await stub.restart();
    expect((await create(stub)).status).toBe(201);
    const refused = await create(stub);
    expect(refused.status).toBe(429);
    expect(refused.body.message).toMatch(/hourly cap/);
    expect(refused.headers.get('retry-after')).toBe(String(15 * 60));
    await stub.restart();
    expect((await create(stub)).status).toBe(429);
    stub.clock.now = Date.parse('2026-11-23T11:00:00Z');
    expect((await create(stub)).status).toBe(201);
  });

  it('publishable-key and secret-key calls have separate hourly budgets: exhausting one leaves the other whole', async () => {
    stub = await startApiStub({
      seed: testSeed(),
      env: { RATE_CAP_PER_SECOND: '100', RATE_CAP_HOURLY: '4', RATE_CAP_HOURLY_PUBLISHABLE: '3' },
    });
    stub.clock.now = Date.parse('2026-11-23T10:10:00Z');
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) ids.push((await create(stub)).body.sessionId as string);
    // Anyone holding the public key can spend the publishable budget…
    const refused = await create(stub);
    expect(refused.status).toBe(429);
    expect(refused.body.message).toMatch(/hourly cap for publishable-key calls/);
    expect(refused.headers.get('ratelimit-policy')).toBe('"hourly";q=3;w=3600, "burst";q=100;w=1');
    expect((await post(`${stub.url}/api/v2/sdk/connect`, { publishableKey: K.pk, interviewId: K.active, sessionId: ids[0] })).status).toBe(
      429,
    );
    // …but the customer's server, with its secret key, still has its whole budget.
    const read = (id: string) => get(`${stub!.url}/api/v2/sdk/sessions/${id}`, { Authorization: `Bearer ${K.sk}` });
    for (let i = 0; i < 4; i += 1) {
      const res = await read(ids[0]!);
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit')).toBe(`"hourly";r=${3 - i};t=3000, "burst";r=${99 - i};t=1`);
    }
    const skRefused = await read(ids[0]!);
    expect(skRefused.status).toBe(429);
    expect(skRefused.body.message).toMatch(/hourly cap for secret-key calls/);
    // Both budgets survive a restart and reset with the clock hour.
    await stub.restart();
    expect((await create(stub)).status).toBe(429);
    stub.clock.now = Date.parse('2026-11-23T11:00:00Z');
    expect((await create(stub)).status).toBe(201);
    expect((await read(ids[0]!)).status).toBe(200);
  });

  it('does not count a replayed idempotent creation', async () => {
    stub = await startApiStub({ seed: testSeed(), env: { RATE_CAP_PER_SECOND: '1', RATE_CAP_HOURLY: '100' } });
    const body = { publishableKey: K.pk, interviewId: K.active };
    const first = await post(`${stub.url}/api/v2/sdk/sessions`, body, { 'Idempotency-Key': 'replay-me' });
    const replay = await post(`${stub.url}/api/v2/sdk/sessions`, body, { 'Idempotency-Key': 'replay-me' });
    expect(first.status).toBe(201);
    expect(replay.status).toBe(201);
    expect(replay.body.sessionId).toBe(first.body.sessionId);
  });
});
