import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { silentLogger } from '../lib/log.ts';
import { waitFor } from '../test/harness/ports.ts';
import { startFakeBackend, type FakeBackend } from '../test/worker/harness.ts';
import { OutcomeOutbox } from './outbox.ts';
import { RedisPool } from './pool.ts';
import { createMetrics } from './telemetry/metrics.ts';

/**
 * The shared outbox against real Redis and a real HTTP backend: two replicas draining the same
 * outbox send each report exactly once, and a report past its deadline is dropped, not sent.
 */
let backend: FakeBackend;
const pools: RedisPool[] = [];
const outboxes: OutcomeOutbox[] = [];

beforeAll(async () => {
  backend = await startFakeBackend();
});

afterAll(async () => {
  await Promise.all(outboxes.map((o) => o.stop()));
  await Promise.all(pools.map((p) => p.close()));
  await backend?.close();
});

function replica(prefix: string, deadlineSeconds = 3600) {
  const pool = new RedisPool({ redis: inject('redisUrl'), keyPrefix: prefix, commandTimeoutMs: 2000 });
  const metrics = createMetrics({ defaultMetrics: false });
  const outbox = new OutcomeOutbox({
    pool,
    report: { backendUrl: backend.url, token: 'worker-token-0123456789', timeoutMs: 1000, attempts: 1 },
    deadlineSeconds,
    maxBackoffMs: 200,
    intervalMs: 50,
    metrics,
    log: silentLogger,
  });
  pools.push(pool);
  outboxes.push(outbox);
  return { pool, outbox, metrics };
}

const failed = (i: number) => ({ status: 'failed' as const, reason: 'test', message: `report ${i}` });

describe('outcome outbox', () => {
  it('two replicas draining one outbox deliver every report exactly once', async () => {
    const prefix = `outbox-unit-${Date.now()}`;
    const a = replica(prefix);
    const b = replica(prefix);
    await backend.pause();
    const ids = Array.from({ length: 20 }, (_, i) => `inv_outbox${prefix.slice(-6)}${i}`);
    await Promise.all(
      ids.map((sessionId, i) => a.outbox.submit({ sessionId, outcome: failed(i), reportToken: `token-${i}-0123456789abcdef` })),
    );
    expect(await a.pool.redis.zcard(a.pool.key('outbox'))).toBe(20);
    await backend.resume();
    a.outbox.start();
    b.outbox.start();
    await waitFor(() => ids.every((id) => backend.reports.some((r) => r.sessionId === id)), { timeoutMs: 15_000, what: 'all 20 reports' });
    await waitFor(async () => (await a.pool.redis.zcard(a.pool.key('outbox'))) === 0, { timeoutMs: 5000, what: 'the outbox to empty' });
    for (const [i, id] of ids.entries()) {
      const got = backend.reports.filter((r) => r.sessionId === id);
      expect(got, id).toHaveLength(1);
      expect(got[0]!.authorization).toBe(`Bearer token-${i}-0123456789abcdef`);
    }
  });

  it('keeps the service attempt under its stored name attempt, and sends items stored by an earlier release alike', async () => {
    const prefix = `outbox-attempt-${Date.now()}`;
    const { pool, outbox } = replica(prefix);
    await backend.pause();
    const ours = `inv_attempt${Date.now()}`;
    await outbox.submit({ sessionId: ours, outcome: failed(1), serviceAttempt: 2, reportToken: null });
    expect(JSON.parse((await pool.redis.get(pool.key('outbox', 'item', ours)))!)).toMatchObject({ attempt: 2 });
    // An item as an earlier release wrote it, with `attempt` beside the report.
    const older = `inv_older${Date.now()}`;
    const item = { sessionId: older, outcome: failed(2), attempt: 1, reportToken: null, deadlineMs: Date.now() + 60_000, tries: 0 };
    await pool.redis.set(pool.key('outbox', 'item', older), JSON.stringify(item), 'PX', 60_000);
    await pool.redis.zadd(pool.key('outbox'), Date.now(), older);
    await backend.resume();
    outbox.start();
    await waitFor(() => [ours, older].every((id) => backend.reports.some((r) => r.sessionId === id)), {
      timeoutMs: 10_000,
      what: 'both reports',
    });
    // The contract's field is `attempt` (docs/contracts.md).
    expect(backend.reports.find((r) => r.sessionId === ours)!.body).toMatchObject({ status: 'failed', attempt: 2 });
    expect(backend.reports.find((r) => r.sessionId === older)!.body).toMatchObject({ status: 'failed', attempt: 1 });
  });

  it('drops a report that passed its deadline unacknowledged, and counts it', async () => {
    const prefix = `outbox-deadline-${Date.now()}`;
    const { pool, outbox, metrics } = replica(prefix, 1);
    await backend.pause();
    const sessionId = `inv_late${Date.now()}`;
    await outbox.submit({ sessionId, outcome: failed(0), reportToken: null });
    await waitFor(async () => (await pool.redis.exists(pool.key('outbox', 'item', sessionId))) === 0, {
      timeoutMs: 5000,
      what: 'the item to expire',
    });
    await backend.resume();
    outbox.start();
    await waitFor(async () => /worker_outcome_reports_total\{result="expired"\} 1/.test(await metrics.registry.metrics()), {
      timeoutMs: 5000,
      what: 'the expired count',
    });
    expect(backend.reports.some((r) => r.sessionId === sessionId)).toBe(false);
    expect(await pool.redis.zcard(pool.key('outbox'))).toBe(0);
  });
});
