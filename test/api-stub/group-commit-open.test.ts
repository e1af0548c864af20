import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseSync } from 'node:sqlite';
import { startApiStub, testSeed, K, post, get, type RunningApiStub } from './harness.ts';

/**
 * Regression: group commit must not leave a write transaction open while the process goes back to
 * reading sockets, or a second connection in the same process (a test, a second sweeper) would
 * block on the file lock with nothing left to release it.
 */
describe('group commit leaves no transaction open between turns', () => {
  let stub: RunningApiStub;
  beforeAll(async () => {
    stub = await startApiStub({ seed: testSeed() });
  });
  afterAll(() => stub.stop());

  it('after a creation and a retrieval, another connection can write at once', async () => {
    for (let i = 0; i < 20; i++) {
      const created = await post(`${stub.url}/api/v2/sdk/sessions`, { publishableKey: K.pk, interviewId: K.active });
      expect(created.status).toBe(201);
      expect(stub.db.isTransaction).toBe(false);
      const got = await get(`${stub.url}/api/v2/sdk/sessions/${created.body.sessionId}`, { Authorization: `Bearer ${K.sk}` });
      expect(got.body.status).toBe('SENT');
    }
    const other = new DatabaseSync(stub.dbPath);
    try {
      other.exec('PRAGMA busy_timeout = 0');
      other.exec('BEGIN IMMEDIATE');
      other.exec('ROLLBACK');
      expect(Number(other.prepare("SELECT COUNT(*) AS n FROM sessions WHERE status = 'SENT'").get()!.n)).toBe(20);
    } finally {
      other.close();
    }
  });
});
