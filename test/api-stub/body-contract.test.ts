import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiStub, testSeed, K, get, post, type RunningApiStub } from './harness.ts';

/**
 * The API's own contract on bodies (issue 19): metadata comes back unchanged, `__proto__` keys
 * included; bodies are JSON sent as `application/json` (else 415); numbers JavaScript cannot carry
 * unchanged are refused with 400 naming their path.
 */
describe('the API contract on request bodies', () => {
  let stub: RunningApiStub;
  let create: string;
  beforeAll(async () => {
    stub = await startApiStub({ seed: testSeed() });
    create = `${stub.url}/api/v2/sdk/sessions`;
  });
  afterAll(() => stub.stop());

  const count = (): number => Number(stub.db.prepare('SELECT COUNT(*) AS n FROM sessions').get()!.n);
  const retrieve = (id: string) => get(`${create}/${id}`, { Authorization: `Bearer ${K.sk}` });

  it('keeps __proto__, constructor and prototype keys of metadata verbatim, at any level', async () => {
    const text = '{"__proto__":{"x":1},"constructor":{"prototype":{"y":2}},"list":[{"__proto__":null}],"prototype":"p"}';
    const res = await post(create, `{"publishableKey":"${K.pk}","interviewId":"${K.active}","metadata":${text}}`);
    expect(res.status).toBe(201);
    const got = await fetch(`${create}/${res.body.sessionId}`, { headers: { Authorization: `Bearer ${K.sk}` } });
    const body = await got.text();
    // Compared as text: a JSON.parse here would hide nothing, but the server's own bytes are the claim.
    expect(body).toContain(`"metadata":${text}`);
    // And no object anywhere got a polluted prototype.
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('refuses a body sent as text/plain, form data or with no Content-Type with 415 in the documented shape, storing nothing', async () => {
    const before = count();
    const body = JSON.stringify({ publishableKey: K.pk, interviewId: K.active });
    for (const type of ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'application/jsonx', null]) {
      const res = await fetch(create, {
        method: 'POST',
        headers: type === null ? {} : { 'Content-Type': type },
        body: new TextEncoder().encode(body),
      });
      expect(res.status, String(type)).toBe(415);
      expect(await res.json()).toEqual({
        error: 'unsupported_media_type',
        message: expect.stringContaining('Content-Type: application/json'),
      });
    }
    const connect = await fetch(`${stub.url}/api/v2/sdk/connect`, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body });
    expect(connect.status).toBe(415);
    expect(count()).toBe(before);
    // application/json with a charset parameter is JSON; JSON is UTF-8 (RFC 8259), so another charset is 400.
    expect((await post(create, body, { 'Content-Type': 'application/json; charset=utf-8' })).status).toBe(201);
    const utf16 = await post(create, body, { 'Content-Type': 'application/json; charset=utf-16' });
    expect(utf16.status).toBe(400);
    expect(utf16.body).toEqual({ error: 'invalid_request', message: 'The request body must be UTF-8 JSON.' });
  });

  it('still answers the browsers preflight that an application/json POST needs, the same on both browser paths', async () => {
    const corsOf = (res: Response) => [...res.headers].filter(([name]) => name.startsWith('access-control-'));
    const answers = [];
    for (const path of ['/api/v2/sdk/sessions', '/api/v2/sdk/connect']) {
      const res = await fetch(`${stub.url}${path}`, {
        method: 'OPTIONS',
        headers: {
          Origin: 'https://app.example',
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers': 'content-type',
        },
      });
      expect(res.status, path).toBe(204);
      expect(res.headers.get('access-control-allow-headers')?.toLowerCase(), path).toContain('content-type');
      expect(res.headers.get('access-control-expose-headers'), path).toContain('Request-Id');
      answers.push(corsOf(res));
    }
    // One CORS handler (api-stub/routes/browser-cors.ts): the two paths cannot drift apart.
    expect(answers[1]).toEqual(answers[0]);
  });

  it('refuses metadata numbers that would not come back as sent, naming the path, storing nothing', async () => {
    const before = count();
    const cases: Array<[string, RegExp]> = [
      ['{"n":1e309}', /^metadata\.n: the number 1e309 .*null/],
      ['{"ids":[1,18446744073709551617]}', /^metadata\.ids\.1: the number 18446744073709551617 .*rounded/],
      ['{"deep":{"tiny":-1e-400}}', /^metadata\.deep\.tiny: the number -1e-400 .*0\)/],
    ];
    for (const [metadata, message] of cases) {
      const res = await post(create, `{"publishableKey":"${K.pk}","interviewId":"${K.active}","metadata":${metadata}}`);
      expect(res.status, metadata).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_request', message: expect.stringMatching(message) });
    }
    expect(count()).toBe(before);
    // Numbers that do come back unchanged are kept.
    const ok = await post(
      create,
      `{"publishableKey":"${K.pk}","interviewId":"${K.active}","metadata":{"big":9007199254740991,"f":0.1,"e":1.5e300,"neg":-0.25}}`,
    );
    expect(ok.status).toBe(201);
    expect((await retrieve(ok.body.sessionId)).body.metadata).toEqual({ big: 9007199254740991, f: 0.1, e: 1.5e300, neg: -0.25 });
  });
});
