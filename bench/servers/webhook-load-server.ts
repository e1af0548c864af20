import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../../api-stub/app.ts';
import { loadConfig } from '../../api-stub/config.ts';
import { openDatabase, transaction } from '../../api-stub/db/database.ts';
import { createRuntime } from '../../api-stub/runtime.ts';
import { applySeed, loadSeedFile } from '../../api-stub/seed.ts';
import { completedEvent } from '../../api-stub/webhooks/events.ts';
import { enqueueEvent } from '../../api-stub/webhooks/outbox-store.ts';
import { silentLogger } from '../../lib/log.ts';
import { systemClock } from '../../lib/time.ts';

/**
 * The api-stub with its webhook runtime, for bench/webhooks.bench.ts. With RECEIVER_URL set, the
 * demo workspace's endpoint points there and events are enqueued steadily (EVENTS_PER_SECOND), so
 * deliveries to that (slow) receiver are in flight while the bench loads session creation.
 * Prints `{"port": N}` once listening; on SIGTERM prints delivery counts.
 */
const dir = mkdtempSync(join(tmpdir(), 'webhook-bench-'));
const receiverUrl = process.env.RECEIVER_URL ?? '';
const config = loadConfig({
  PORT: '0',
  API_STUB_DB: join(dir, 'bench.sqlite'),
  RATE_CAP_HOURLY: '1000000000',
  RATE_CAP_PER_SECOND: '1000000000',
  EGRESS_ALLOW_HOSTS: '127.0.0.1',
  WEBHOOK_POLL_INTERVAL_MS: '200',
});
const db = openDatabase(config.dbPath);
applySeed(db, loadSeedFile(new URL('../../examples/seed.json', import.meta.url).pathname), Date.now());
let timer: NodeJS.Timeout | undefined;
const runtime = createRuntime(config, { db, clock: systemClock, log: silentLogger, keys: null });
if (receiverUrl) {
  db.prepare('UPDATE webhook_endpoints SET url = ?').run(receiverUrl);
  const perTick = Math.max(1, Math.round(Number(process.env.EVENTS_PER_SECOND ?? 50) / 10));
  let n = 0;
  timer = setInterval(() => {
    const now = Date.now();
    transaction(db, () => {
      for (let i = 0; i < perTick; i += 1) {
        n += 1;
        enqueueEvent(
          db,
          'ws_demo',
          completedEvent({ sessionId: `inv_bench${n}`, interviewId: 'dpl_onboarding', metadata: { n } }, now, now),
          now,
          `inv_bench${n}`,
        );
      }
    });
    runtime.dispatcher.wake();
  }, 100);
}
runtime.start();
const server = createServer(createApp(config, { db, clock: systemClock, log: silentLogger, routing: runtime.routing }));
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
});
process.on('SIGTERM', () => {
  if (timer) clearInterval(timer);
  const inFlight = runtime.dispatcher.inFlight();
  const delivered = Number(db.prepare("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE outcome <> 'in_flight'").get()!.n);
  const events = Number(db.prepare('SELECT COUNT(*) AS n FROM webhook_events').get()!.n);
  process.stderr.write(`${JSON.stringify({ eventsEnqueued: events, attemptsLogged: delivered, inFlightAtStop: inFlight })}\n`);
  server.closeAllConnections();
  server.close(() => {
    // Attempts still waiting on the slow receiver are abandoned: this is a benchmark, not a shutdown test.
    db.close();
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  });
});
