import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiStub, testSeed, K, post, get, type RunningApiStub } from './harness.ts';

const ISO_SECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

describe('POST /api/v2/sdk/sessions', () => {
  let stub: RunningApiStub;
  let create: string;
  beforeAll(async () => {
    stub = await startApiStub({ seed: testSeed(), env: { PUBLIC_URL: 'https://respond.example.test' } });
    create = `${stub.url}/api/v2/sdk/sessions`;
  });
  afterAll(() => stub.stop());

  const count = (): number => Number(stub.db.prepare('SELECT COUNT(*) AS n FROM sessions').get()!.n);

  it('creates a session: 201 with sessionId inv_, sessionUrl with from=sdk, expiresAt in ISO seconds', async () => {
    const res = await post(create, { publishableKey: K.pk, interviewId: K.active, metadata: { userId: 42, tags: ['a'] } });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['expiresAt', 'sessionId', 'sessionUrl']);
    expect(res.body.sessionId).toMatch(/^inv_[a-z0-9]{20}$/);
    // The link carries its own capability in the fragment (`#k=`, 32 random bytes), so it works alone.
    expect(res.body.sessionUrl).toMatch(
      new RegExp(`^https://respond\\.example\\.test/s/${res.body.sessionId}\\?from=sdk#k=[A-Za-z0-9_-]{43}$`),
    );
    expect(new URL(res.body.sessionUrl).searchParams.get('from')).toBe('sdk');
    // Default TTL: 24 h after the (test) clock.
    expect(res.body.expiresAt).toMatch(ISO_SECONDS);
    expect(res.body.expiresAt).toBe('2026-11-24T10:00:00Z');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('caps expiresAt at the deployment expiresAt', async () => {
    const res = await post(create, { publishableKey: K.pk, interviewId: K.soon });
    expect(res.status).toBe(201);
    expect(res.body.expiresAt).toBe('2026-11-23T12:00:00Z');
  });

  it('moves the session to SENT once the 201 is written, and stores the metadata unchanged', async () => {
    const metadata = { nested: { deep: [1, 2, { x: null }] }, unicode: 'héllo ☃' };
    const res = await post(create, { publishableKey: K.pkLive, interviewId: K.active, metadata });
    const got = await get(`${create}/${res.body.sessionId}`, { Authorization: `Bearer ${K.sk}` });
    expect(got.status).toBe(200);
    expect(got.body.status).toBe('SENT');
    expect(got.body.metadata).toEqual(metadata);
  });

  it('names every answer with a Request-Id, errors included', async () => {
    const ok = await post(create, { publishableKey: K.pk, interviewId: K.active });
    const bad = await post(create, { publishableKey: K.pk });
    const ids = [ok.headers.get('request-id'), bad.headers.get('request-id')];
    for (const id of ids) expect(id).toMatch(/^req_[a-z0-9]{20}$/);
    expect(ids[0]).not.toBe(ids[1]);
  });

  it('answers the health probes', async () => {
    expect(await (await fetch(`${stub.url}/healthz`)).json()).toEqual({ status: 'ok' });
    expect(await (await fetch(`${stub.url}/readyz`)).json()).toEqual({ status: 'ready' });
  });

  it('answers a CORS preflight for browsers', async () => {
    const res = await fetch(create, {
      method: 'OPTIONS',
      headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'POST' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')).toContain('POST');
    expect(res.headers.get('access-control-allow-headers')).toContain('Idempotency-Key');
  });

  const cases: Array<[string, unknown, number, string, RegExp?]> = [
    ['a body that is not JSON', '{"publishableKey":', 400, 'invalid_request', /not valid JSON/],
    ['a JSON array body', '[1,2]', 400, 'invalid_request', /JSON object/],
    ['a JSON string body', '"hello"', 400, 'invalid_request'],
    ['no interviewId', { publishableKey: K.pk }, 400, 'invalid_request', /^interviewId/],
    ['a numeric interviewId', { publishableKey: K.pk, interviewId: 7 }, 400, 'invalid_request', /^interviewId/],
    ['a numeric publishableKey', { publishableKey: 7, interviewId: K.active }, 400, 'invalid_request', /^publishableKey/],
    ['metadata that is an array', { publishableKey: K.pk, interviewId: K.active, metadata: [1] }, 400, 'invalid_request', /^metadata/],
    ['metadata that is null', { publishableKey: K.pk, interviewId: K.active, metadata: null }, 400, 'invalid_request', /^metadata/],
    ['an unknown field', { publishableKey: K.pk, interviewId: K.active, sessionTtl: 5 }, 400, 'invalid_request', /sessionTtl/],
    [
      'metadata over 16 KiB',
      { publishableKey: K.pk, interviewId: K.active, metadata: { s: 'x'.repeat(17_000) } },
      400,
      'invalid_request',
      /^metadata/,
    ],
    [
      'a body over 64 KiB',
      { publishableKey: K.pk, interviewId: K.active, metadata: { s: 'x'.repeat(70_000) } },
      400,
      'invalid_request',
      /larger than/,
    ],
    ['no publishableKey', { interviewId: K.active }, 401, 'invalid_key', /missing/],
    ['an unknown publishableKey', { publishableKey: 'pk_test_unknown00000000', interviewId: K.active }, 401, 'invalid_key'],
    ['a secret key in the body', { publishableKey: K.sk, interviewId: K.active }, 401, 'invalid_key', /secret key/],
    ['a key of no known form', { publishableKey: 'hello', interviewId: K.active }, 401, 'invalid_key'],
    ['a deployment of another workspace', { publishableKey: K.pk, interviewId: K.otherActive }, 403, 'cross_workspace'],
    ['an unknown deployment', { publishableKey: K.pk, interviewId: 'dpl_nope' }, 404, 'interview_not_found'],
    ['an interviewId of another form', { publishableKey: K.pk, interviewId: 'inv_123' }, 404, 'interview_not_found'],
    ['a DRAFT deployment', { publishableKey: K.pk, interviewId: K.draft }, 409, 'interview_not_active', /DRAFT/],
    ['a PAUSED deployment', { publishableKey: K.pk, interviewId: K.paused }, 409, 'interview_not_active', /PAUSED/],
    ['an expired deployment', { publishableKey: K.pk, interviewId: K.expired }, 410, 'interview_expired'],
  ];
  for (const [what, body, status, code, message] of cases) {
    it(`refuses ${what} with ${status} ${code} and stores nothing`, async () => {
      const before = count();
      const res = await post(create, body);
      expect(res.status).toBe(status);
      expect(res.body.error).toBe(code);
      expect(typeof res.body.message).toBe('string');
      if (message) expect(res.body.message).toMatch(message);
      expect(Object.keys(res.body).sort()).toEqual(['error', 'message']);
      // Browsers can read our errors too.
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(count()).toBe(before);
    });
  }

  it('never echoes a secret key in an error message', async () => {
    const res = await post(create, { publishableKey: K.sk, interviewId: K.active });
    expect(JSON.stringify(res.body)).not.toContain(K.sk);
  });

  it('refuses other methods on the collection with 405 and Allow: POST', async () => {
    const res = await fetch(create, { method: 'PUT' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect((await res.json()).error).toBe('method_not_allowed');
  });

  describe('Idempotency-Key', () => {
    it('returns the first session for the same key and body, marked Idempotent-Replayed', async () => {
      const body = { publishableKey: K.pk, interviewId: K.active, metadata: { a: 1, b: 2 } };
      const first = await post(create, body, { 'Idempotency-Key': 'key-same-1' });
      const before = count();
      // Same meaning, other key order in metadata.
      const again = await post(create, { ...body, metadata: { b: 2, a: 1 } }, { 'Idempotency-Key': 'key-same-1' });
      expect(again.status).toBe(201);
      expect(again.body).toEqual(first.body);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(count()).toBe(before);
    });

    it('refuses the same key with another body: 400 naming Idempotency-Key', async () => {
      await post(create, { publishableKey: K.pk, interviewId: K.active }, { 'Idempotency-Key': 'key-diff-1' });
      const res = await post(create, { publishableKey: K.pk, interviewId: K.soon }, { 'Idempotency-Key': 'key-diff-1' });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_request');
      expect(res.body.message).toMatch(/^Idempotency-Key/);
    });

    it('forgets a key after 24 h', async () => {
      const body = { publishableKey: K.pk, interviewId: K.active };
      const first = await post(create, body, { 'Idempotency-Key': 'key-ttl-1' });
      stub.clock.now += 24 * 3600 * 1000 + 1000;
      try {
        const later = await post(create, body, { 'Idempotency-Key': 'key-ttl-1' });
        expect(later.status).toBe(201);
        expect(later.body.sessionId).not.toBe(first.body.sessionId);
      } finally {
        stub.clock.now -= 24 * 3600 * 1000 + 1000;
      }
    });

    it('refuses a malformed key', async () => {
      const res = await post(create, { publishableKey: K.pk, interviewId: K.active }, { 'Idempotency-Key': 'x'.repeat(300) });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/^Idempotency-Key/);
    });

    it('gives concurrent identical requests with one key a single session', async () => {
      const before = count();
      const body = { publishableKey: K.pk, interviewId: K.active, metadata: { burst: true } };
      const answers = await Promise.all(Array.from({ length: 8 }, () => post(create, body, { 'Idempotency-Key': 'burst-key' })));
      expect(answers.map((a) => a.status)).toEqual(Array(8).fill(201));
      expect(new Set(answers.map((a) => a.body.sessionId)).size).toBe(1);
      expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(7);
      expect(count()).toBe(before + 1);
    });

    it('scopes keys per workspace', async () => {
      const a = await post(create, { publishableKey: K.pk, interviewId: K.active }, { 'Idempotency-Key': 'shared-key' });
      const b = await post(create, { publishableKey: K.otherPk, interviewId: K.otherActive }, { 'Idempotency-Key': 'shared-key' });
      expect(b.status).toBe(201);
      expect(b.body.sessionId).not.toBe(a.body.sessionId);
    });
  });
});
