import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiStub, testSeed, K, get, post, type RunningApiStub } from './harness.ts';

/**
 * `/readyz` while the database cannot write (issue 19): it stayed 200 while every write answered
 * 500. Writes are made to fail for real: SQLite's own page limit on the app's connection
 * (`PRAGMA max_page_count`), which fails them with SQLITE_FULL exactly as a full disk does.
 */
describe('readiness when the database cannot write', () => {
  let stub: RunningApiStub;
  beforeAll(async () => {
    stub = await startApiStub({ seed: testSeed() });
  });
  afterAll(() => stub.stop());

  const pages = (): number => Number(Object.values(stub.db.prepare('PRAGMA page_count').get()!)[0]);

  it('answers 503 once writes fail with SQLITE_FULL, and 200 again once a write succeeds', async () => {
    expect((await get(`${stub.url}/readyz`)).status).toBe(200);
    stub.db.exec(`PRAGMA max_page_count = ${pages()}`);
    // Fill what free pages are left until creation fails.
    let failed: Awaited<ReturnType<typeof post>> | null = null;
    for (let i = 0; i < 2_000 && !failed; i++) {
      const res = await post(`${stub.url}/api/v2/sdk/sessions`, {
        publishableKey: K.pk,
        interviewId: K.active,
        metadata: { filler: 'x'.repeat(2_000) },
      });
      if (res.status !== 201) failed = res;
    }
    expect(failed?.status).toBe(500);
    expect(failed?.body).toEqual({ error: 'internal_error', message: expect.any(String) });

    const ready = await get(`${stub.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.body).toEqual({ error: 'unavailable', message: expect.stringContaining('database or disk is full (SQLITE_FULL)') });
    // Still not ready on the next probe: the probe's own write fails too.
    expect((await get(`${stub.url}/readyz`)).status).toBe(503);
    expect((await get(`${stub.url}/healthz`)).status).toBe(200);

    // Space again: the next probe's write commits and readiness returns.
    stub.db.exec('PRAGMA max_page_count = 1073741823');
    expect((await get(`${stub.url}/readyz`)).status).toBe(200);
    expect((await post(`${stub.url}/api/v2/sdk/sessions`, { publishableKey: K.pk, interviewId: K.active })).status).toBe(201);
  });

  it('answers 503 at the first probe after a creation failed, even when a small write still fits (issue 41)', async () => {
    expect((await get(`${stub.url}/readyz`)).status).toBe(200);
    // No free page left inside the file, then three more allowed: too few for a session with 15 KB of
    // metadata (four overflow pages and more), enough for a write of two pages.
    stub.db.exec('VACUUM');
    stub.db.exec(`PRAGMA max_page_count = ${pages() + 3}`);
    const created = await post(`${stub.url}/api/v2/sdk/sessions`, {
      publishableKey: K.pk,
      interviewId: K.active,
      metadata: { filler: 'x'.repeat(15_000) },
    });
    expect(created.status).toBe(500);
    // The probe that used to fit in those three pages said ready while every such creation failed.
    const ready = await get(`${stub.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.body).toEqual({ error: 'unavailable', message: expect.stringContaining('SQLITE_FULL') });
    expect(
      (
        await post(`${stub.url}/api/v2/sdk/sessions`, {
          publishableKey: K.pk,
          interviewId: K.active,
          metadata: { filler: 'x'.repeat(15_000) },
        })
      ).status,
    ).toBe(500);
    expect((await get(`${stub.url}/readyz`)).status).toBe(503);

    stub.db.exec('PRAGMA max_page_count = 1073741823');
    expect((await get(`${stub.url}/readyz`)).status).toBe(200);
    expect(
      (
        await post(`${stub.url}/api/v2/sdk/sessions`, {
          publishableKey: K.pk,
          interviewId: K.active,
          metadata: { filler: 'x'.repeat(15_000) },
        })
      ).status,
    ).toBe(201);
  });
});
