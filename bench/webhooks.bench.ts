import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { openDatabase, transaction } from '../api-stub/db/database.ts';
import { postJson } from '../api-stub/outbound/post-json.ts';
import { upsertWebhookEndpoint } from '../api-stub/store/webhook-endpoints.ts';
import { upsertWorkspace } from '../api-stub/store/workspaces.ts';
import { createDispatcher } from '../api-stub/webhooks/dispatcher.ts';
import { completedEvent, serializeEvent } from '../api-stub/webhooks/events.ts';
import { enqueueEvent, pendingCount } from '../api-stub/webhooks/outbox-store.ts';
import { silentLogger } from '../lib/log.ts';
import { SIGNATURE_HEADER, signatureHeader } from '../lib/signature.ts';
import { startWebhookReceiver } from '../test/harness/webhook-receiver.ts';
import { fmt, machineLine, median, printTable, ratePerSecond, startServerProcess } from './support.ts';

/**
 * 1. Webhook delivery throughput to a local receiver: the outbox path (SQLite rows, leased claims,
 *    a log row and a settle per attempt) beside a peer that POSTs the same signed bytes directly
 *    with the same concurrency and no database, in alternating rounds.
 * 2. p99 of session creation with deliveries to a slow receiver in flight, beside the same server
 *    without deliveries (both api-stubs in child processes, loaded in alternating rounds).
 */
const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 2000);
const CONCURRENCY = 16;
const ROUNDS = 3;
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const SLOW_MS = 1_000;
const policy = { allowHosts: new Set(['127.0.0.1']) };

async function outboxRound(url: string): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'webhook-tput-'));
  const db = openDatabase(join(dir, 'db.sqlite'));
  upsertWorkspace(db, { id: 'ws_bench', name: 'bench' }, Date.now());
  upsertWebhookEndpoint(db, 'ws_bench', { url, secrets: ['whsec_bench_000000000'] }, Date.now());
  const now = Date.now();
  transaction(db, () => {
    for (let i = 0; i < EVENTS; i += 1)
      enqueueEvent(
        db,
        'ws_bench',
        completedEvent({ sessionId: `inv_${i}`, interviewId: 'dpl_x', metadata: { i } }, now, now),
        now,
        `inv_${i}`,
      );
  });
  const dispatcher = createDispatcher({
    db,
    clock: Date.now,
    log: silentLogger,
    policy,
    timeoutMs: 8_000,
    retrySchedule: [],
    concurrency: CONCURRENCY,
    pollIntervalMs: 50,
  });
  const started = performance.now();
  dispatcher.start();
  while (pendingCount(db) > 0 || dispatcher.inFlight() > 0) await new Promise((r) => setTimeout(r, 5));
  const rate = EVENTS / ((performance.now() - started) / 1000);
  await dispatcher.stop();
  const delivered = Number(db.prepare("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE outcome = 'delivered'").get()!.n);
  db.close();
  rmSync(dir, { recursive: true, force: true });
  if (delivered !== EVENTS) throw new Error(`outbox delivered ${delivered} of ${EVENTS}`);
  return rate;
}

async function directRound(url: string): Promise<number> {
  const now = Date.now();
  const bodies = Array.from({ length: EVENTS }, (_, i) =>
    serializeEvent(completedEvent({ sessionId: `inv_${i}`, interviewId: 'dpl_x', metadata: { i } }, now, now)),
  );
  let ok = 0;
  const rate = await ratePerSecond(EVENTS, CONCURRENCY, async (i) => {
    const body = bodies[i]!;
    const res = await postJson({
      url,
      body,
      headers: { [SIGNATURE_HEADER]: signatureHeader(['whsec_bench_000000000'], Math.floor(Date.now() / 1000), body) },
      signal: AbortSignal.timeout(8_000),
      httpsOnly: false,
      policy,
      maxResponseBytes: 1024,
    });
    if (res.status === 200) ok += 1;
  });
  if (ok !== EVENTS) throw new Error(`direct delivered ${ok} of ${EVENTS}`);
  return rate;
}

async function benchThroughput(): Promise<Array<{ name: string; rate: number }>> {
  const receiver = await startWebhookReceiver();
  const rounds = { outbox: [] as number[], direct: [] as number[] };
  await directRound(receiver.url); // warm-up
  for (let r = 0; r < ROUNDS; r += 1) {
    rounds.direct.push(await directRound(receiver.url));
    rounds.outbox.push(await outboxRound(receiver.url));
  }
  await receiver.close();
  return [
    { name: 'direct signed POSTs, no outbox (peer)', rate: median(rounds.direct) },
    { name: 'outbox dispatcher (SQLite, lease, log row)', rate: median(rounds.outbox) },
  ];
}

interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

async function load(port: number, durationS: number): Promise<LoadResult> {
  const r = await autocannon({
    url: `http://127.0.0.1:${port}/api/v2/sdk/sessions`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ publishableKey: 'pk_test_demo0000000000000000', interviewId: 'dpl_onboarding', metadata: { userId: 'u-1' } }),
    connections: 10,
    duration: durationS,
  });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors };
}

async function benchCreationLatency() {
  const slow = await startWebhookReceiver();
  slow.setMode({ kind: 'status', status: 200, delayMs: SLOW_MS });
  const servers = [
    { name: 'no deliveries', server: await startServerProcess('bench/servers/webhook-load-server.ts'), rounds: [] as LoadResult[] },
    {
      name: `deliveries in flight (receiver answers after ${SLOW_MS} ms, 50 events/s enqueued)`,
      server: await startServerProcess('bench/servers/webhook-load-server.ts', { RECEIVER_URL: slow.url, EVENTS_PER_SECOND: '50' }),
      rounds: [] as LoadResult[],
    },
  ];
  for (const s of servers) await load(s.server.port, 2);
  for (let r = 0; r < ROUNDS; r += 1) for (const s of servers) s.rounds.push(await load(s.server.port, DURATION_S));
  const tails: string[] = [];
  for (const s of servers) tails.push(`${s.name}: ${await s.server.stop()}`);
  const received = slow.received.length;
  await slow.close();
  return {
    rows: servers.map((s) => ({
      name: s.name,
      p99: median(s.rounds.map((x) => x.p99)),
      p50: median(s.rounds.map((x) => x.p50)),
      rps: median(s.rounds.map((x) => x.rps)),
      non2xx: s.rounds.reduce((n, x) => n + x.non2xx, 0),
      errors: s.rounds.reduce((n, x) => n + x.errors, 0),
    })),
    tails,
    received,
  };
}

console.log(machineLine());
console.log(
  `throughput: ${EVENTS} interview.completed events per round to a local HTTP receiver (200 at once), concurrency ` +
    `${CONCURRENCY}, ${ROUNDS} alternating rounds, median shown\n`,
);
const tput = await benchThroughput();
printTable(
  ['webhook delivery', 'events/s'],
  tput.map((r) => [r.name, fmt(r.rate)]),
);
console.log(`\noutbox / direct: ${fmt(tput[1]!.rate / tput[0]!.rate, 2)}x (the outbox also claims, logs and settles a row per attempt)\n`);

console.log(
  `session creation: autocannon, 10 connections, ${ROUNDS} alternating rounds of ${DURATION_S} s per server after ` +
    `a 2 s warm-up (median shown); api-stubs in child processes\n`,
);
const lat = await benchCreationLatency();
printTable(
  ['POST /api/v2/sdk/sessions', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors'],
  lat.rows.map((r) => [r.name, fmt(r.rps), r.p50, r.p99, r.non2xx, r.errors]),
);
console.log(
  `\np99 with deliveries / without: ${fmt(lat.rows[1]!.p99 / Math.max(lat.rows[0]!.p99, 1), 2)}x; slow receiver got ${lat.received} requests`,
);
for (const t of lat.tails) console.log(`  ${t}`);
if (lat.rows.some((r) => r.non2xx > 0 || r.errors > 0)) {
  console.log('non-2xx or failed requests during the run: the creation numbers are not valid');
  process.exitCode = 1;
}
