import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiStub, testSeed, K, post, get, type RunningApiStub } from './harness.ts';
import { markClicked, markCompleted, markStarted, markFailed, markExpired } from '../../api-stub/store/sessions.ts';

describe('GET /api/v2/sdk/sessions/{sessionId}', () => {
  let stub: RunningApiStub;
  let base: string;
  const auth = { Authorization: `Bearer ${K.sk}` };
  beforeAll(async () => {
    stub = await startApiStub({ seed: testSeed() });
    base = `${stub.url}/api/v2/sdk/sessions`;
  });
  afterAll(() => stub.stop());

  async function newSession(metadata?: Record<string, unknown>): Promise<string> {
    const res = await post(base, { publishableKey: K.pk, interviewId: K.active, ...(metadata ? { metadata } : {}) });
    expect(res.status).toBe(201);
    return res.body.sessionId as string;
  }

  it('returns every field of the retrieved session, with clickedAt, completedAt and response null before they apply', async () => {
    const id = await newSession();
    const res = await get(`${base}/${id}`, auth);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id,
      interviewId: K.active,
      status: 'SENT',
      createdAt: '2026-11-23T10:00:00Z',
      clickedAt: null,
      completedAt: null,
      metadata: {},
      url: expect.stringMatching(new RegExp(`^${stub.url.replace(/\./g, '\\.')}/s/${id}\\?from=sdk#k=[A-Za-z0-9_-]{43}$`)),
      expiresAt: '2026-11-24T10:00:00Z',
      response: null,
    });
    expect(res.headers.get('cache-control')).toBe('no-store');
    // Server only: no CORS on retrieval.
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('follows the session through CLICKED, STARTED, a failed attempt, and COMPLETED with its response', async () => {
    const id = await newSession({ respondent: 'r-1' });
    const at = (iso: string): number => Date.parse(iso);
    markClicked(stub.db, id, at('2026-11-23T10:05:07Z'));
    // A second open changes nothing.
    markClicked(stub.db, id, at('2026-11-23T10:06:00Z'));
    let res = await get(`${base}/${id}`, auth);
    expect(res.body.status).toBe('CLICKED');
    expect(res.body.clickedAt).toBe('2026-11-23T10:05:07Z');

    markStarted(stub.db, id, at('2026-11-23T10:05:30Z'));
    expect(markFailed(stub.db, id, at('2026-11-23T10:07:00Z')).kind).toBe('stayed');
    res = await get(`${base}/${id}`, auth);
    expect(res.body.status).toBe('STARTED');
    expect(res.body.completedAt).toBeNull();

    markCompleted(stub.db, id, { transcriptKey: 's3://bucket/transcripts/x.json', summary: 'Liked it.' }, at('2026-11-23T10:12:00Z'));
    res = await get(`${base}/${id}`, auth);
    expect(res.body.status).toBe('COMPLETED');
    expect(res.body.completedAt).toBe('2026-11-23T10:12:00Z');
    expect(res.body.metadata).toEqual({ respondent: 'r-1' });
    expect(res.body.response).toEqual({
      id: expect.stringMatching(/^rsp_[a-z0-9]{20}$/),
      status: 'COMPLETED',
      transcriptKey: 's3://bucket/transcripts/x.json',
      summary: 'Liked it.',
    });
    // Terminal: expiry no longer applies.
    expect(markExpired(stub.db, id, at('2026-11-25T00:00:00Z')).kind).toBe('refused');
  });

  it('shows EXPIRED after the expiry move', async () => {
    const id = await newSession();
    markExpired(stub.db, id, Date.parse('2026-11-24T10:00:00Z'));
    const res = await get(`${base}/${id}`, auth);
    expect(res.body.status).toBe('EXPIRED');
    expect(res.body.completedAt).toBeNull();
  });

  const authCases: Array<[string, Record<string, string>, RegExp]> = [
    ['no Authorization header', {}, /Missing Authorization/],
    ['a non-Bearer scheme', { Authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }, /Bearer/],
    ['a publishable key', { Authorization: `Bearer ${K.pk}` }, /Publishable keys cannot read sessions/],
    ['an unknown secret key', { Authorization: 'Bearer sk_test_unknown000000000' }, /not a recognized secret key/],
    ['a token of no known form', { Authorization: 'Bearer hello' }, /not a recognized/],
  ];
  for (const [what, headers, message] of authCases) {
    it(`refuses ${what} with 401 invalid_key`, async () => {
      const id = await newSession();
      const res = await get(`${base}/${id}`, headers);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'invalid_key', message: expect.stringMatching(message) });
    });
  }

  it('refuses a secret key of another workspace with 403 cross_workspace', async () => {
    const id = await newSession();
    const res = await get(`${base}/${id}`, { Authorization: `Bearer ${K.otherSk}` });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('cross_workspace');
  });

  it('answers 404 session_not_found for unknown and malformed ids', async () => {
    for (const id of ['inv_doesnotexist', 'dpl_active', 'x'.repeat(300), '%E2%98%83']) {
      const res = await get(`${base}/${id}`, auth);
      expect(res.status).toBe(404);
      expect(res.body.error).toBe('session_not_found');
    }
  });

  it('refuses a CORS preflight and other methods with 405, without CORS headers', async () => {
    const id = await newSession();
    const pre = await fetch(`${base}/${id}`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'GET' },
    });
    expect(pre.status).toBe(405);
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
    expect((await pre.json()).message).toMatch(/no CORS/);
    const del = await fetch(`${base}/${id}`, { method: 'DELETE', headers: auth });
    expect(del.status).toBe(405);
    expect(del.headers.get('allow')).toBe('GET');
  });

  it('answers unknown routes with 404 not_found in the error shape', async () => {
    const res = await get(`${stub.url}/api/v2/sdk/nothing`);
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('not_found');
  });
});
