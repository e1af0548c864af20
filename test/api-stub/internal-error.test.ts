import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiStub, testSeed, K, post, get, type RunningApiStub } from './harness.ts';
import { createLogger } from '../../lib/log.ts';

/**
 * A fault on our side (here: the sessions table has vanished under the running app) is answered
 * 500 internal_error with no detail, logged with context, and the app keeps serving afterwards.
 */
describe('500 internal_error', () => {
  let stub: RunningApiStub;
  const lines: string[] = [];
  beforeAll(async () => {
    stub = await startApiStub({ seed: testSeed(), deps: { log: createLogger({ name: 'test', sink: (line) => lines.push(line) }) } });
  });
  afterAll(() => stub.stop());

  it('answers both endpoints with internal_error while storage is broken, and recovers', async () => {
    const created = await post(`${stub.url}/api/v2/sdk/sessions`, { publishableKey: K.pk, interviewId: K.active });
    expect(created.status).toBe(201);
    stub.db.exec('ALTER TABLE sessions RENAME TO sessions_moved');
    try {
      const create = await post(`${stub.url}/api/v2/sdk/sessions`, { publishableKey: K.pk, interviewId: K.active });
      expect(create.status).toBe(500);
      expect(create.body).toEqual({ error: 'internal_error', message: expect.stringMatching(/Retry with exponential backoff/) });
      expect(create.body.message).not.toMatch(/sessions|SQL|no such table/i);
      const read = await get(`${stub.url}/api/v2/sdk/sessions/${created.body.sessionId}`, { Authorization: `Bearer ${K.sk}` });
      expect(read.status).toBe(500);
      expect(read.body.error).toBe('internal_error');
    } finally {
      stub.db.exec('ALTER TABLE sessions_moved RENAME TO sessions');
    }
    const logged = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'unhandled error');
    expect(logged.length).toBeGreaterThanOrEqual(2);
    expect(logged[0].path).toBe('/api/v2/sdk/sessions');
    // The secret key of the failing retrieval never reaches the log.
    expect(lines.join('\n')).not.toContain(K.sk);
    const again = await post(`${stub.url}/api/v2/sdk/sessions`, { publishableKey: K.pk, interviewId: K.active });
    expect(again.status).toBe(201);
  });
});
