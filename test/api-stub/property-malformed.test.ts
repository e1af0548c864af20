import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { startApiStub, testSeed, K, type RunningApiStub } from './harness.ts';
import { MAX_METADATA_DEPTH } from '../../api-stub/sessions/schemas.ts';

/**
 * Property: whatever malformed input reaches either session endpoint, the answer is a 4xx in the
 * `{error, message}` shape (never a 500) and the database is exactly as before.
 */
const JSON_TYPE = { 'Content-Type': 'application/json' };

describe('property: malformed input never causes a 500 or a state change', () => {
  let stub: RunningApiStub;
  beforeAll(async () => {
    stub = await startApiStub({ seed: testSeed() });
    // One real session, so that retrieval has something to guard.
    await fetch(`${stub.url}/api/v2/sdk/sessions`, {
      method: 'POST',
      headers: JSON_TYPE,
      body: JSON.stringify({ publishableKey: K.pk, interviewId: K.active }),
    });
  });
  afterAll(() => stub.stop());

  function snapshot(): string {
    const tables = [
      'sessions',
      'responses',
      'idempotency_keys',
      'rate_counters',
      'workspaces',
      'api_keys',
      'deployments',
      'webhook_endpoints',
    ];
    return JSON.stringify(tables.map((t) => stub.db.prepare(`SELECT * FROM ${t} ORDER BY 1`).all()));
  }

  async function expectClientError(res: Response): Promise<void> {
    const text = await res.text();
    expect(res.status, text).toBeGreaterThanOrEqual(400);
    expect(res.status, text).toBeLessThan(500);
    const body = JSON.parse(text);
    expect(Object.keys(body).sort()).toEqual(['error', 'message']);
    expect(typeof body.error).toBe('string');
    expect(typeof body.message).toBe('string');
  }

  const headerValue = fc.stringMatching(/^[\x21-\x7e][\x20-\x7e]{0,80}$/);
  const notAString = fc.oneof(
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.jsonValue(), { maxLength: 3 }),
    fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 3 }),
  );
  const notAnObject = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.jsonValue(), { maxLength: 3 }));
  // A key that can never authenticate: random text, or a well-formed but unknown key.
  const unknownKey = fc.oneof(fc.string(), fc.stringMatching(/^pk_(test|live)_[a-z0-9]{8,20}$/), fc.constant(K.sk));

  /** Bodies that fail validation or authentication before anything is counted or stored. */
  const malformedBody: fc.Arbitrary<string | Uint8Array<ArrayBuffer>> = fc.oneof(
    fc.string().map((s) => s),
    fc.uint8Array({ maxLength: 200 }).map((bytes) => new Uint8Array(bytes)),
    fc.jsonValue().map((v) => JSON.stringify(v) ?? 'null'),
    // The right key with a wrongly typed or missing field.
    fc
      .record({ publishableKey: fc.constant(K.pk), interviewId: notAString }, { requiredKeys: ['publishableKey'] })
      .map((o) => JSON.stringify(o)),
    fc
      .record({ publishableKey: fc.constant(K.pk), interviewId: fc.constant(K.active), metadata: notAnObject })
      .map((o) => JSON.stringify(o)),
    fc
      .record({ publishableKey: fc.constant(K.pk), interviewId: fc.constant(K.active), extra: fc.jsonValue() })
      .map((o) => JSON.stringify(o)),
    // A key that does not authenticate, with anything else.
    fc
      .record(
        {
          publishableKey: fc.oneof(unknownKey, notAString),
          interviewId: fc.oneof(fc.constant(K.active), fc.string(), notAString),
          metadata: fc.jsonValue(),
        },
        { requiredKeys: [] },
      )
      .map((o) => JSON.stringify(o)),
    // Oversized: the whole body over 64 KiB, or metadata over 16 KiB, with the right key.
    fc
      .integer({ min: 65_537, max: 150_000 })
      .map((n) => JSON.stringify({ publishableKey: K.pk, interviewId: K.active, metadata: { s: 'x'.repeat(n) } })),
    fc
      .integer({ min: 16_385, max: 60_000 })
      .map((n) => JSON.stringify({ publishableKey: K.pk, interviewId: K.active, metadata: { s: 'é'.repeat(n / 2) } })),
    // Truncated valid JSON.
    fc.nat({ max: 60 }).map((n) => JSON.stringify({ publishableKey: K.pk, interviewId: K.active, metadata: { a: 'b' } }).slice(0, n)),
  );

  it('POST /api/v2/sdk/sessions', async () => {
    const before = snapshot();
    await fc.assert(
      // Mostly JSON, so that the bodies reach validation; sometimes anything (415 or 400 then).
      fc.asyncProperty(
        malformedBody,
        fc.option(fc.oneof(fc.constant('application/json'), fc.constant('application/json'), headerValue)),
        fc.option(headerValue),
        async (body, contentType, idempotencyKey) => {
          const headers: Record<string, string> = {};
          if (contentType !== null) headers['Content-Type'] = contentType;
          if (idempotencyKey !== null) headers['Idempotency-Key'] = idempotencyKey;
          const res = await fetch(`${stub.url}/api/v2/sdk/sessions`, { method: 'POST', headers, body });
          await expectClientError(res);
        },
      ),
      { numRuns: 300 },
    );
    expect(snapshot()).toBe(before);
  });

  /** JSON text of arrays and objects nested `depth` levels deep (built as text: the test's own stack is no deeper than the server's). */
  function nested(depth: number, shape: 'array' | 'object' | 'mixed'): string {
    let open = '';
    let close = '';
    for (let i = 0; i < depth; i += 1) {
      const array = shape === 'array' || (shape === 'mixed' && i % 2 === 0);
      open += array ? '[' : '{"a":';
      close = (array ? ']' : '}') + close;
    }
    return `${open}1${close}`;
  }
  const tooDeep = fc.record({
    depth: fc.oneof(fc.integer({ min: MAX_METADATA_DEPTH, max: 200 }), fc.integer({ min: 3_000, max: 6_000 })),
    shape: fc.constantFrom('array' as const, 'object' as const, 'mixed' as const),
  });

  it('metadata nested deeper than the bound is 400 invalid_request on create and connect (no stack overflow)', async () => {
    const before = snapshot();
    await fc.assert(
      fc.asyncProperty(tooDeep, fc.boolean(), async ({ depth, shape }, withKey) => {
        // The top-level object is one level, so `depth` more inside it is depth + 1 in all.
        const metadata = `{"m":${nested(depth, shape)}}`;
        const headers: Record<string, string> = withKey ? { ...JSON_TYPE, 'Idempotency-Key': `deep-${depth}-${shape}` } : { ...JSON_TYPE };
        const created = await fetch(`${stub.url}/api/v2/sdk/sessions`, {
          method: 'POST',
          headers,
          body: `{"publishableKey":"${K.pk}","interviewId":"${K.active}","metadata":${metadata}}`,
        });
        const text = await created.clone().text();
        await expectClientError(created);
        expect(JSON.parse(text).error).toBe('invalid_request');
        const connect = await fetch(`${stub.url}/api/v2/sdk/connect`, {
          method: 'POST',
          headers: JSON_TYPE,
          body: `{"publishableKey":"${K.pk}","interviewId":"${K.active}","sessionId":"inv_x1","metadata":${metadata}}`,
        });
        await expectClientError(connect);
      }),
      { numRuns: 40 },
    );
    expect(snapshot()).toBe(before);
  });

  it('metadata exactly at the depth bound is accepted', async () => {
    const res = await fetch(`${stub.url}/api/v2/sdk/sessions`, {
      method: 'POST',
      headers: JSON_TYPE,
      body: `{"publishableKey":"${K.pk}","interviewId":"${K.active}","metadata":{"m":${nested(MAX_METADATA_DEPTH - 1, 'mixed')}}}`,
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const id = String(((await res.json()) as { sessionId: string }).sessionId);
    stub.db.prepare('DELETE FROM sessions WHERE id = ?').run(id);
  });

  // A `%` not followed by two hex digits, or bytes that are not UTF-8 (`%E0%A4%A`, `%FF`).
  const badEscape = fc.oneof(
    fc.constantFrom('%E0%A4%A', '%', '%%', '%G1', '%FF', '%C3%28', '%E0%A4', 'abc%2', '%ED%A0%80'),
    fc.tuple(fc.stringMatching(/^[a-z0-9_]{0,12}$/), fc.stringMatching(/^%([0-9A-F]?|[G-Z][0-9])$/)).map(([a, b]) => a + b),
  );
  const pathWith = (p: string) =>
    fc.constantFrom(`/s/${p}`, `/api/v2/sdk/sessions/${p}`, `/respondent/assets/${p}`, `/api/v2/worker/sessions/${p}/outcome`);

  it('paths with bad percent-encoding are 4xx, never 500', async () => {
    const before = snapshot();
    await fc.assert(
      fc.asyncProperty(badEscape.chain(pathWith), fc.constantFrom('GET', 'POST'), async (path, method) => {
        const res = await fetch(`${stub.url}${path}`, {
          method,
          headers: { Accept: 'application/json', Authorization: `Bearer ${K.sk}` },
          ...(method === 'POST' ? { body: '{}' } : {}),
        });
        await expectClientError(res);
      }),
      { numRuns: 100 },
    );
    expect(snapshot()).toBe(before);
  });

  it('asset names that are Object.prototype members are 404, never 500', async () => {
    const names = fc.constantFrom(...Object.getOwnPropertyNames(Object.prototype), 'prototype', 'hasOwnProperty', '__proto__');
    await fc.assert(
      fc.asyncProperty(names, async (name) => {
        const res = await fetch(`${stub.url}/respondent/assets/${encodeURIComponent(name)}`);
        expect(res.status).toBe(404);
        await expectClientError(res);
      }),
      { numRuns: 40 },
    );
  });

  it('POST /api/v2/sdk/connect with a session link capability, and worker outcome reports, with anything that does not authenticate', async () => {
    const existing = String(stub.db.prepare('SELECT id FROM sessions LIMIT 1').get()!.id);
    const before = snapshot();
    const sessionId = fc.oneof(fc.constant(existing), fc.stringMatching(/^inv_[a-z0-9]{1,30}$/), fc.string(), notAString);
    const connectBody = fc.record(
      {
        sessionId,
        sessionToken: fc.oneof(fc.string(), fc.stringMatching(/^[A-Za-z0-9_-]{43}$/), notAString),
        interviewId: fc.oneof(fc.constant(K.active), fc.string(), notAString),
        metadata: fc.jsonValue(),
      },
      { requiredKeys: ['sessionToken'] },
    );
    await fc.assert(
      fc.asyncProperty(connectBody, async (body) => {
        await expectClientError(
          await fetch(`${stub.url}/api/v2/sdk/connect`, { method: 'POST', headers: JSON_TYPE, body: JSON.stringify(body) }),
        );
      }),
      { numRuns: 150 },
    );
    const bearer = fc.option(
      fc.oneof(
        headerValue,
        headerValue.map((v) => `Bearer ${v}`),
        fc.constant(`Bearer ${K.sk}`),
      ),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.constant(existing), fc.string({ minLength: 1 }).map(encodeURIComponent)),
        bearer,
        fc.oneof(
          fc.string(),
          fc.jsonValue().map((v) => JSON.stringify(v) ?? 'null'),
        ),
        async (id, auth, body) => {
          const headers: Record<string, string> = auth === null ? { ...JSON_TYPE } : { ...JSON_TYPE, Authorization: auth };
          await expectClientError(await fetch(`${stub.url}/api/v2/worker/sessions/${id}/outcome`, { method: 'POST', headers, body }));
        },
      ),
      { numRuns: 150 },
    );
    expect(snapshot()).toBe(before);
  });

  it('GET /api/v2/sdk/sessions/{sessionId}', async () => {
    const existing = String(stub.db.prepare('SELECT id FROM sessions LIMIT 1').get()!.id);
    const before = snapshot();
    const sessionId = fc.oneof(
      fc.constant(existing),
      fc.string({ minLength: 1 }).map(encodeURIComponent),
      fc.stringMatching(/^inv_[a-z0-9]{1,30}$/),
    );
    const authorization = fc.option(
      fc.oneof(
        headerValue,
        headerValue.map((v) => `Bearer ${v}`),
        fc.constant(`Bearer ${K.pk}`),
        fc.stringMatching(/^Bearer sk_test_[a-z0-9]{8,20}$/),
      ),
    );
    await fc.assert(
      fc.asyncProperty(sessionId, authorization, fc.option(fc.string()), async (id, auth, body) => {
        const headers: Record<string, string> = {};
        if (auth !== null) headers.Authorization = auth;
        // With a body, the same path is hit with POST (405): also a client error, also no change.
        const res = await fetch(`${stub.url}/api/v2/sdk/sessions/${id}`, {
          method: body === null ? 'GET' : 'POST',
          headers,
          ...(body === null ? {} : { body }),
        });
        await expectClientError(res);
      }),
      { numRuns: 300 },
    );
    expect(snapshot()).toBe(before);
  });
});
