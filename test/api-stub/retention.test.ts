import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transaction } from '../../api-stub/db/database.ts';
import { createPruner, type Pruner } from '../../api-stub/retention/pruner.ts';
import { createRuntime } from '../../api-stub/runtime.ts';
import { createSweeper } from '../../api-stub/sessions/sweeper.ts';
import { recordAttemptStart, settleDelivery } from '../../api-stub/webhooks/delivery-log.ts';
import { claimDue, countAttemptStart, settle } from '../../api-stub/webhooks/outbox-store.ts';
import { silentLogger } from '../../lib/log.ts';
import { startApiStub, testSeed, K, post, type RunningApiStub } from './harness.ts';

/**
 * Retention (issue 41, item 7): the api-stub's tables only grew. A real SQLite file, sessions made
 * through the HTTP API, expiry by the real sweeper, webhook rows by the real outbox and log code, and
 * an injected clock moved by days. The pruner deletes what is past its retention and nothing else:
 * not a key within its TTL, not a session still live, not an event whose outbox row is pending, not
 * an attempt still in flight. The file itself shrinks (a new file has incremental auto-vacuum).
 */
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const OLD = 40;
const FRESH = 5;

describe('retention', () => {
  let stub: RunningApiStub;
  let pruner: Pruner;
  const t0 = Date.parse('2026-11-23T10:00:00Z');
  const count = (table: string, where = '1'): number =>
    Number(stub.db.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE ${where}`).get()!.n);
  const pages = (): number => Number(Object.values(stub.db.prepare('PRAGMA page_count').get()!)[0]);

  beforeAll(async () => {
    stub = await startApiStub({ seed: testSeed() });
    pruner = createPruner({
      db: stub.db,
      clock: stub.clock,
      log: silentLogger,
      retention: { ...stub.config.retention, batchRows: 7 },
      idempotencyTtlMs: stub.config.idempotencyTtlSeconds * 1000,
    });
  });
  afterAll(() => stub.stop());

  const create = async (key: string, filler = ''): Promise<string> => {
    const res = await post(
      `${stub.url}/api/v2/sdk/sessions`,
      { publishableKey: K.pk, interviewId: K.active, metadata: { key, filler } },
      { 'Idempotency-Key': key },
    );
    expect(res.status).toBe(201);
    return res.body.sessionId as string;
  };

  it('prunes idempotency keys past their TTL, and only those: the table shrinks', async () => {
    stub.clock.now = t0;
    for (let i = 0; i < OLD; i++) await create(`old-${i}`, 'x'.repeat(2_000));
    // An hour short of the TTL (24 h): nothing is due yet.
    stub.clock.now = t0 + 23 * HOUR;
    expect((await pruner.prune()).idempotencyKeys).toBe(0);
    expect(count('idempotency_keys')).toBe(OLD);

    stub.clock.now = t0 + 25 * HOUR;
    for (let i = 0; i < FRESH; i++) await create(`fresh-${i}`);
    const summary = await pruner.prune();
    expect(summary.idempotencyKeys).toBe(OLD);
    expect(count('idempotency_keys')).toBe(FRESH);
    expect(count('idempotency_keys', "idempotency_key LIKE 'fresh-%'")).toBe(FRESH);
    // Sessions are kept: none has finished yet.
    expect(summary.sessions).toBe(0);
    expect(count('sessions')).toBe(OLD + FRESH);
  });

  it('prunes finished sessions and settled webhook rows past their retention; keeps pending and in-flight ones', async () => {
    // The old sessions expire (the real sweeper), each with its session.expired event in the outbox.
    const sweeper = createSweeper({ db: stub.db, clock: stub.clock, log: silentLogger, intervalMs: 60_000 });
    expect(sweeper.sweep()).toBe(OLD);
    expect(count('webhook_outbox', "state = 'pending'")).toBe(OLD);

    // Half the rows are sent and settled; one attempt is left in flight; the rest stay pending.
    const claimed = claimDue(stub.db, 'dsp_test', stub.clock(), 60_000, OLD / 2 + 1);
    expect(claimed).toHaveLength(OLD / 2 + 1);
    for (const [i, claim] of claimed.entries()) {
      transaction(stub.db, () => {
        countAttemptStart(stub.db, claim.outboxId, 'dsp_test');
        const id = recordAttemptStart(stub.db, {
          workspaceId: claim.workspaceId,
          eventId: claim.eventId,
          eventType: claim.eventType,
          endpointId: claim.endpointId,
          endpointUrl: 'http://127.0.0.1:9/hook',
          attempt: claim.attempt,
          createdAt: stub.clock(),
        });
        if (i === OLD / 2) return; // in flight
        settleDelivery(stub.db, id, { statusCode: 200, durationMs: 5, error: null, responseBody: 'ok', outcome: 'delivered' });
        settle(stub.db, claim.outboxId, 'dsp_test', { state: 'delivered' }, stub.clock());
      });
    }
    const inFlightEvent = claimed[OLD / 2]!.eventId;

    // 29 days later: everything is within its retention (30 days).
    stub.clock.now = t0 + 25 * HOUR + 29 * DAY;
    const early = await pruner.prune();
    expect(early).toMatchObject({ sessions: 0, webhookEvents: 0, outboxRows: 0, deliveries: 0 });

    const before = {
      pages: pages(),
      sessions: count('sessions'),
      events: count('webhook_events'),
      deliveries: count('webhook_deliveries'),
    };
    stub.clock.now = t0 + 25 * HOUR + 31 * DAY;
    const late = await pruner.prune();
    // The expired sessions go; the fresh ones were never swept (still live), so they stay.
    expect(late.sessions).toBe(OLD);
    expect(count('sessions')).toBe(FRESH);
    expect(count('sessions', "status IN ('COMPLETED', 'EXPIRED')")).toBe(0);
    // Settled events go with their outbox rows; pending ones, and the one in flight, stay.
    expect(late).toMatchObject({ webhookEvents: OLD / 2, outboxRows: OLD / 2, deliveries: OLD / 2 });
    expect(count('webhook_events')).toBe(before.events - OLD / 2);
    expect(count('webhook_outbox', "state = 'pending'")).toBe(OLD / 2);
    expect(count('webhook_outbox', "state != 'pending'")).toBe(0);
    expect(count('webhook_deliveries')).toBe(1);
    expect(count('webhook_deliveries', `outcome = 'in_flight' AND event_id = '${inFlightEvent}'`)).toBe(1);
    expect(count('webhook_events', `id = '${inFlightEvent}'`)).toBe(1);
    // The freed pages went back to the file system.
    expect(late.freedPages).toBeGreaterThan(0);
    expect(pages()).toBeLessThan(before.pages);
    expect(before.sessions).toBe(OLD + FRESH);
  });

  it('runs at start from the runtime: keys past their TTL go without any call', async () => {
    stub.clock.now = t0 + 40 * DAY;
    for (let i = 0; i < 3; i++) await create(`later-${i}`);
    stub.clock.now += 25 * HOUR;
    expect(count('idempotency_keys')).toBe(3);
    const runtime = createRuntime(stub.config, { db: stub.db, clock: stub.clock, log: silentLogger, keys: null });
    runtime.start();
    try {
      await expect.poll(() => count('idempotency_keys'), { timeout: 10_000 }).toBe(0);
    } finally {
      await runtime.stop();
    }
  });
});
