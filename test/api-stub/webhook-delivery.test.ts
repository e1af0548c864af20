import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import Stripe from 'stripe';
import { openDatabase, transaction, type Database } from '../../api-stub/db/database.ts';
import { upsertWebhookEndpoint } from '../../api-stub/store/webhook-endpoints.ts';
import { upsertWorkspace } from '../../api-stub/store/workspaces.ts';
import { parseAllowHosts } from '../../api-stub/outbound/egress-guard.ts';
import { loadRoutingConfig } from '../../api-stub/routing-config.ts';
import { loadTrustedCas } from '../../api-stub/outbound/trust.ts';
import { createCertificateAuthority } from '../harness/pki.ts';
import { createDispatcher, type Dispatcher, type DispatcherOptions } from '../../api-stub/webhooks/dispatcher.ts';
import { listDeliveries } from '../../api-stub/webhooks/delivery-log.ts';
import { completedEvent, expiredEvent, failedEvent } from '../../api-stub/webhooks/events.ts';
import { enqueueEvent, pendingCount, setEndpointRetries } from '../../api-stub/webhooks/outbox-store.ts';
import { parseSignatureHeader } from '../../lib/signature.ts';
import { silentLogger } from '../../lib/log.ts';
import { constructEvent } from '../../sdk/server/webhooks.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../harness/webhook-receiver.ts';
import { waitFor } from '../harness/ports.ts';

const SECRET = 'whsec_current_0123456789';
const OLD_SECRET = 'whsec_previous_0123456789';
const facts = { sessionId: 'inv_abc', interviewId: 'dpl_xyz', metadata: { plan: 'pro', n: 1 } };
const policy = { allowHosts: parseAllowHosts('127.0.0.1') };

let receiver: WebhookReceiver;
let db: Database;
let dispatchers: Dispatcher[];
let endpointId: string;

function dispatcher(overrides: Partial<DispatcherOptions> = {}, database = db): Dispatcher {
  const d = createDispatcher({
    db: database,
    clock: Date.now,
    log: silentLogger,
    policy,
    timeoutMs: 2_000,
    retrySchedule: [40, 40],
    pollIntervalMs: 20,
    ...overrides,
  });
  dispatchers.push(d);
  d.start();
  return d;
}

function setup(database: Database, secrets = [SECRET]): string {
  upsertWorkspace(database, { id: 'ws_1', name: 'One' }, Date.now());
  return upsertWebhookEndpoint(database, 'ws_1', { url: receiver.url, secrets }, Date.now()).id;
}

function enqueue(database: Database, sessionId = facts.sessionId) {
  const event = completedEvent({ ...facts, sessionId }, Date.parse('2026-11-23T10:00:00Z'), Date.now());
  transaction(database, () => enqueueEvent(database, 'ws_1', event, Date.now(), sessionId));
  return event;
}

// Settled attempts: a row is written (in_flight) when its attempt starts and settled when it ends.
const rows = (database = db) => listDeliveries(database, 'ws_1', { limit: 100 }).data.filter((r) => r.outcome !== 'in_flight');

beforeEach(async () => {
  receiver = await startWebhookReceiver();
  db = openDatabase(':memory:');
  dispatchers = [];
  endpointId = setup(db);
});
afterEach(async () => {
  await Promise.all(dispatchers.map((d) => d.stop()));
  await receiver.close();
});

describe('webhook delivery to a real receiver', () => {
  it('sends the envelope signed over the raw body; the SDK and an independent verifier accept it', async () => {
    const event = enqueue(db);
    dispatcher();
    const [got] = await receiver.waitForCount(1);
    const header = String(got!.headers['service-signature']);
    const verified = constructEvent(got!.rawBody, header, SECRET);
    expect(verified).toEqual(JSON.parse(JSON.stringify(event)));
    expect(verified).toMatchObject({ type: 'interview.completed', data: { ...facts, completedAt: '2026-11-23T10:00:00Z' } });
    expect(verified.id).toMatch(/^evt_/);
    expect(Number.isInteger(verified.created)).toBe(true);
    expect(Stripe.webhooks.constructEvent(got!.rawBody, header, SECRET).id).toBe(event.id);
    await waitFor(() => rows().length === 1, { timeoutMs: 10_000, what: 'the delivery row' });
    expect(rows()[0]).toMatchObject({
      eventId: event.id,
      eventType: 'interview.completed',
      endpointUrl: receiver.url,
      attempt: 1,
      statusCode: 200,
      error: null,
      responseBody: 'ok',
      outcome: 'delivered',
    });
  });

  it('signs with every active secret during a rotation; either secret verifies', async () => {
    upsertWebhookEndpoint(db, 'ws_1', { url: receiver.url, secrets: [SECRET, OLD_SECRET] }, Date.now());
    enqueue(db);
    dispatcher();
    const [got] = await receiver.waitForCount(1);
    const header = String(got!.headers['service-signature']);
    const parsed = parseSignatureHeader(header);
    expect(parsed).toMatchObject({ signatures: expect.arrayContaining([expect.any(String), expect.any(String)]) });
    expect(constructEvent(got!.rawBody, header, OLD_SECRET).type).toBe('interview.completed');
    expect(constructEvent(got!.rawBody, header, SECRET).type).toBe('interview.completed');
    expect(() => constructEvent(got!.rawBody, header, 'whsec_unrelated_secret')).toThrow(/No v1 signature matches/);
  });

  it('carries the documented data of interview.failed and session.expired', async () => {
    const now = Date.now();
    transaction(db, () => {
      enqueueEvent(db, 'ws_1', failedEvent(facts, { reason: 'llm_timeout', message: 'no answer' }, now, now), now, facts.sessionId);
      enqueueEvent(
        db,
        'ws_1',
        expiredEvent({ ...facts, sessionId: 'inv_2' }, { expiresAtMs: now - 1_000, expiredAtMs: now, lastStatus: 'CLICKED' }, now),
        now,
        'inv_2',
      );
    });
    dispatcher();
    const got = await receiver.waitForCount(2);
    const events = got.map((g) => constructEvent(g.rawBody, String(g.headers['service-signature']), SECRET));
    const failed = events.find((e) => e.type === 'interview.failed')!;
    const expired = events.find((e) => e.type === 'session.expired')!;
    expect(Object.keys(failed.data).sort()).toEqual(['failedAt', 'interviewId', 'message', 'metadata', 'reason', 'sessionId']);
    expect(failed.data).toMatchObject({ reason: 'llm_timeout', message: 'no answer', metadata: facts.metadata });
    expect(Object.keys(expired.data).sort()).toEqual(['expiredAt', 'expiresAt', 'interviewId', 'lastStatus', 'metadata', 'sessionId']);
    expect(expired.data).toMatchObject({ sessionId: 'inv_2', lastStatus: 'CLICKED' });
  });

  it('delivers over HTTPS to a receiver whose certificate chains to the extra CA, and refuses it without', async () => {
    const ca = createCertificateAuthority();
    const tlsReceiver = await startWebhookReceiver({ tls: ca.issueServer('receiver') });
    try {
      db.prepare('UPDATE webhook_endpoints SET url = ?').run(tlsReceiver.url);
      enqueue(db, 'inv_tls_1');
      const d = dispatcher({ ca: loadTrustedCas(ca.certFile)! });
      const [got] = await tlsReceiver.waitForCount(1);
      expect(constructEvent(got!.rawBody, String(got!.headers['service-signature']), SECRET).type).toBe('interview.completed');
      await d.stop();
      enqueue(db, 'inv_tls_2');
      dispatcher();
      await waitFor(() => rows().length === 2, { timeoutMs: 10_000, what: 'the refused TLS attempt' });
      expect(rows()[0]!.error).toMatch(/^tls: The TLS handshake with 127\.0\.0\.1 failed/);
      expect(tlsReceiver.received).toHaveLength(1);
    } finally {
      await tlsReceiver.close();
    }
  });

  it('enqueues one event of a kind per session: a repeated enqueue adds nothing', () => {
    const first = enqueue(db);
    const again = completedEvent(facts, Date.now(), Date.now());
    expect(transaction(db, () => enqueueEvent(db, 'ws_1', again, Date.now(), facts.sessionId))).toEqual({ inserted: false, endpoints: 0 });
    expect(pendingCount(db)).toBe(1);
    expect(first.id).not.toBe(again.id);
  });
});

describe('failures, retries and timeouts', () => {
  it('logs a 500 and drops the event when retries are off (the default)', async () => {
    receiver.setMode({ kind: 'status', status: 500 });
    enqueue(db);
    dispatcher();
    await waitFor(() => rows().length === 1, { timeoutMs: 10_000, what: 'one logged attempt' });
    expect(rows()[0]).toMatchObject({
      attempt: 1,
      statusCode: 500,
      error: 'receiver answered 500',
      responseBody: 'receiver says 500',
      outcome: 'dropped',
    });
    expect(pendingCount(db)).toBe(0);
    // Nothing is due any more: another dispatcher finds nothing to send.
    dispatcher();
    await new Promise((r) => setImmediate(r));
    expect(receiver.received).toHaveLength(1);
  });

  it('retries a 500 with the schedule when the endpoint opts in, signing each attempt afresh', async () => {
    setEndpointRetries(db, endpointId, true);
    receiver.script([
      { kind: 'status', status: 500 },
      { kind: 'status', status: 500 },
    ]);
    receiver.setMode({ kind: 'status', status: 204 });
    let fakeNow = Date.now();
    const clock = () => (fakeNow += 2_000); // every read moves 2 s, so each signature gets its own t
    enqueue(db);
    dispatcher({ clock, retrySchedule: [1, 1, 1] });
    await waitFor(() => rows().some((r) => r.outcome === 'delivered'), { timeoutMs: 5_000, what: 'a delivered attempt' });
    const log = rows().reverse();
    expect(log.map((r) => [r.attempt, r.statusCode, r.outcome])).toEqual([
      [1, 500, 'retry_scheduled'],
      [2, 500, 'retry_scheduled'],
      [3, 204, 'delivered'],
    ]);
    const stamps = receiver.received.map(
      (g) => (parseSignatureHeader(String(g.headers['service-signature'])) as { timestamp: number }).timestamp,
    );
    expect(new Set(stamps).size).toBe(3);
    for (const g of receiver.received) expect(g.rawBody).toBe(receiver.received[0]!.rawBody);
  });

  it('gives up after the schedule is spent', async () => {
    setEndpointRetries(db, endpointId, true);
    receiver.setMode({ kind: 'status', status: 503 });
    enqueue(db);
    dispatcher({ retrySchedule: [1, 1] });
    await waitFor(() => rows().some((r) => r.outcome === 'dropped'), { timeoutMs: 5_000, what: 'the final attempt' });
    expect(
      rows()
        .map((r) => r.outcome)
        .reverse(),
    ).toEqual(['retry_scheduled', 'retry_scheduled', 'dropped']);
  });

  it('times out a hanging receiver at the configured timeout and logs it', async () => {
    receiver.setMode({ kind: 'hang' });
    enqueue(db);
    dispatcher({ timeoutMs: 300 });
    await waitFor(() => rows().length === 1, { timeoutMs: 10_000, what: 'the timed-out attempt' });
    const [row] = rows();
    expect(row).toMatchObject({ statusCode: null, error: 'timeout: timed out after 300 ms', outcome: 'dropped' });
    expect(row!.durationMs).toBeGreaterThanOrEqual(290);
    expect(row!.durationMs).toBeLessThan(1_500);
  });

  it('times out a hanging receiver at the real 8 s default', async () => {
    const { webhookTimeoutMs } = loadRoutingConfig({});
    expect(webhookTimeoutMs).toBe(8_000);
    receiver.setMode({ kind: 'hang' });
    enqueue(db);
    dispatcher({ timeoutMs: webhookTimeoutMs });
    await waitFor(() => rows().length === 1, { timeoutMs: 12_000, intervalMs: 100, what: 'the timed-out attempt' });
    const [row] = rows();
    expect(row).toMatchObject({ statusCode: null, error: 'timeout: timed out after 8000 ms', outcome: 'dropped' });
    expect(row!.durationMs).toBeGreaterThanOrEqual(7_950);
    expect(row!.durationMs).toBeLessThan(9_500);
  }, 20_000);

  it('refuses a private webhook address at send time unless allow-listed, and logs why', async () => {
    const port = new URL(receiver.url).port;
    db.prepare('UPDATE webhook_endpoints SET url = ?').run(`https://localhost:${port}/hook`);
    enqueue(db);
    dispatcher({ policy: { allowHosts: new Set() } });
    await waitFor(() => rows().length === 1, { timeoutMs: 10_000, what: 'the refused attempt' });
    expect(rows()[0]!.error).toMatch(/egress_refused: The host localhost resolves to .*, a loopback address/);
    expect(receiver.received).toHaveLength(0);
  });
});

describe('the outbox across restarts', () => {
  it('sends what was pending when a stopped api-stub starts again, each event once', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'voice-outbox-')), 'db.sqlite');
    const first = openDatabase(file);
    setup(first);
    receiver.setMode({ kind: 'status', status: 200, delayMs: 150 });
    for (let i = 0; i < 6; i += 1) enqueue(first, `inv_${i}`);
    const d1 = dispatcher({ concurrency: 2 }, first);
    await receiver.waitForCount(1);
    await d1.stop(); // graceful: attempts in flight finish and are settled
    first.close();
    const sentBefore = receiver.received.length;
    expect(sentBefore).toBeLessThan(6);

    const second = openDatabase(file);
    dispatcher({}, second);
    await receiver.waitForCount(6);
    await waitFor(() => pendingCount(second) === 0, { timeoutMs: 10_000, what: 'an empty outbox' });
    const ids = receiver.received.map((g) => (JSON.parse(g.rawBody) as { id: string }).id);
    expect(new Set(ids).size).toBe(6);
    expect(ids).toHaveLength(6);
    expect(rows(second)).toHaveLength(6);
    second.close();
  });

  it('two dispatchers on one database never send the same row (leases)', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'voice-outbox-')), 'db.sqlite');
    const a = openDatabase(file);
    const b = openDatabase(file);
    setup(a);
    receiver.setMode({ kind: 'status', status: 200, delayMs: 20 });
    for (let i = 0; i < 20; i += 1) enqueue(a, `inv_${i}`);
    dispatcher({ concurrency: 3 }, a);
    dispatcher({ concurrency: 3 }, b);
    await waitFor(() => pendingCount(a) === 0, { timeoutMs: 10_000, what: 'an empty outbox' });
    const ids = receiver.received.map((g) => (JSON.parse(g.rawBody) as { id: string }).id);
    expect(ids).toHaveLength(20);
    expect(new Set(ids).size).toBe(20);
    await Promise.all(dispatchers.map((d) => d.stop()));
    a.close();
    b.close();
  });

  it("a crashed dispatcher's claim is sent again after its lease lapses (at least once)", async () => {
    enqueue(db);
    // Claim the row as a dispatcher that then dies without settling.
    const { claimDue } = await import('../../api-stub/webhooks/outbox-store.ts');
    // A lease far longer than the check below takes, even when the machine is loaded.
    expect(claimDue(db, 'dsp_dead', Date.now(), 2000, 10)).toHaveLength(1);
    dispatcher();
    await new Promise((r) => setTimeout(r, 60));
    expect(receiver.received).toHaveLength(0); // still leased
    await receiver.waitForCount(1, 15_000);
  });
});
