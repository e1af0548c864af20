import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiStub, testSeed, K, get, post, type RunningApiStub } from './harness.ts';

/**
 * Issue 41: with the disk full, reading a session answered 500, because counting the call against
 * the rate caps is a write. A read must still answer: the counter fails open for that call (docs/api.md,
 * "Rate caps"). On a full disk every write fails once the WAL cannot grow. SQLite's own page limit
 * (`PRAGMA max_page_count`, used by readiness-disk-full) fails only writes that need a new page, and
 * the counter's rows fit in pages the file has; so here every write is made to fail for real with
 * `PRAGMA query_only` on the app's connection: SQLITE_READONLY, what a read-only or vanished volume
 * gives, one of the storage failures the api-stub treats alike (api-stub/db/write-health.ts).
 */
describe('reads while the database cannot write', () => {
  let stub: RunningApiStub;
  let id: string;
  beforeAll(async () => {
    stub = await startApiStub({ seed: testSeed() });
    const created = await post(`${stub.url}/api/v2/sdk/sessions`, {
      publishableKey: K.pk,
      interviewId: K.active,
      metadata: { plan: 'pro' },
    });
    expect(created.status).toBe(201);
    id = created.body.sessionId as string;
  });
  afterAll(() => stub.stop());

  const auth = { Authorization: `Bearer ${K.sk}` };

  /** Runs `fn` while every write on the app's connection fails with SQLITE_READONLY. */
  async function whileWritesFail(fn: () => Promise<void>): Promise<void> {
    stub.db.exec('PRAGMA query_only = ON');
    try {
      await fn();
    } finally {
      stub.db.exec('PRAGMA query_only = OFF');
    }
  }

  it('answers GET /api/v2/sdk/sessions/:id and the delivery log with 200, and creation still fails', async () => {
    await whileWritesFail(async () => {
      // A new hour: counting the call means new rows, as on any first call of a window.
      stub.clock.now += 3_600_000;
      const read = await get(`${stub.url}/api/v2/sdk/sessions/${id}`, auth);
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject({ id, metadata: { plan: 'pro' } });
      expect(read.headers.get('ratelimit')).toMatch(/"hourly";r=\d+/);
      expect((await get(`${stub.url}/api/v2/workspace/webhook-deliveries`, auth)).status).toBe(200);
      const create = await post(`${stub.url}/api/v2/sdk/sessions`, { publishableKey: K.pk, interviewId: K.active });
      expect(create.status).toBe(500);
    });
  });

  it('still refuses a workspace over its cap when the counter cannot be written', async () => {
    // The counters as stored decide: the hourly cap is reached in them, so the read is refused 429.
    stub.clock.now += 3_600_000;
    const hour = Math.floor(stub.clock.now / 3_600_000) * 3_600_000;
    stub.db
      .prepare("INSERT INTO rate_counters (workspace_id, window_kind, window_start, count) VALUES ('ws_alpha', 'hour', ?, ?)")
      .run(hour, stub.config.rateCaps.hourly);
    await whileWritesFail(async () => {
      const read = await get(`${stub.url}/api/v2/sdk/sessions/${id}`, auth);
      expect(read.status).toBe(429);
      expect(read.body.error).toBe('rate_limit_exceeded');
    });
  });
});
