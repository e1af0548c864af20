import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { loadConfig } from '../api-stub/config.ts';
import { openDatabase, transaction, type Database } from '../api-stub/db/database.ts';
import { createPruner } from '../api-stub/retention/pruner.ts';
import { applySeed, parseSeed } from '../api-stub/seed.ts';
import { createSession } from '../api-stub/sessions/create.ts';
import { createSweeper } from '../api-stub/sessions/sweeper.ts';
import { listDeliveries, recordAttemptStart, settleDelivery } from '../api-stub/webhooks/delivery-log.ts';
import { claimDue, countAttemptStart, settle } from '../api-stub/webhooks/outbox-store.ts';
import { silentLogger } from '../lib/log.ts';
import { fmt, machineLine, median, printTable } from './support.ts';

/**
 * The api-stub's database after 100,000 sessions (issue 41, item 7), made by the real creation code
 * (each with an Idempotency-Key and ~200 bytes of metadata), expired by the real sweeper (one
 * session.expired event each), and each event sent once (outbox row settled, one delivery-log row).
 * Sizes of the file and its WAL before and after a pruning pass 31 days later, the pass's longest
 * stall of the event loop (its longest batch), and the delivery log filtered by eventId with and
 * without its index (migration 012).
 */
const SESSIONS = Number(process.env.BENCH_RETENTION_SESSIONS ?? 100_000);
const DAY = 86_400_000;
const dir = mkdtempSync(join(tmpdir(), 'bench-retention-'));
const dbPath = join(dir, 'api-stub.sqlite');
const config = loadConfig({ API_STUB_DB: dbPath, RATE_CAP_HOURLY: '1000000000', RATE_CAP_PER_SECOND: '1000000000' });
let now = Date.parse('2026-11-01T00:00:00Z');
const clock = (): number => now;

const interview = {
  title: 'Bench',
  language: 'en',
  intro: 'Hello.',
  questions: [{ id: 'q1', text: 'How are you?', maxFollowUps: 0 }],
  closing: 'Bye.',
};
const seed = {
  workspaces: [
    {
      id: 'ws_bench',
      name: 'Bench',
      keys: { publishable: ['pk_test_bench00000000000000'], secret: ['sk_test_bench00000000000000'] },
      deployments: [{ id: 'dpl_bench', status: 'ACTIVE', expiresAt: null, interview }],
      webhookEndpoints: [{ url: 'https://hooks.example.com/voice', secrets: ['whsec_bench0000000000000'] }],
    },
  ],
};

const mb = (bytes: number): string => `${fmt(bytes / 1e6, 1)} MB`;
const fileSize = (path: string): number => {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
};
const pragma = (db: Database, name: string): number => Number(Object.values(db.prepare(`PRAGMA ${name}`).get() ?? {})[0] ?? 0);
const rows = (db: Database, table: string): number => Number(db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get()!.n);

function snapshot(db: Database, label: string): string[] {
  return [
    label,
    mb(fileSize(dbPath)),
    mb(fileSize(`${dbPath}-wal`)),
    fmt(pragma(db, 'freelist_count')),
    fmt(rows(db, 'sessions')),
    fmt(rows(db, 'idempotency_keys')),
    fmt(rows(db, 'webhook_events')),
    fmt(rows(db, 'webhook_outbox')),
    fmt(rows(db, 'webhook_deliveries')),
  ];
}

function filterMs(db: Database, eventId: string): number {
  const times: number[] = [];
  for (let i = 0; i < 50; i++) {
    const started = performance.now();
    listDeliveries(db, 'ws_bench', { limit: 20, eventId });
    times.push(performance.now() - started);
  }
  return median(times);
}

async function main(): Promise<void> {
  console.log(machineLine());
  const db = openDatabase(dbPath);
  applySeed(db, parseSeed(seed), now);
  const started = performance.now();
  for (let i = 0; i < SESSIONS; i += 500) {
    const batch: Array<Promise<unknown>> = [];
    for (let j = i; j < Math.min(i + 500, SESSIONS); j++) {
      const metadata = { userId: `user-${j}`, plan: 'pro', team: 'research', source: 'email-campaign-2026-11', note: 'x'.repeat(120) };
      batch.push(
        createSession(
          db,
          { publishableKey: 'pk_test_bench00000000000000', interviewId: 'dpl_bench', metadata },
          { config, now, publicUrl: 'https://app.example.com', idempotencyKey: `key-${j}` },
        ),
      );
    }
    await Promise.all(batch);
    now += 100;
  }
  const createdS = (performance.now() - started) / 1000;
  now += config.sessionTtlSeconds * 1000 + 1000;
  createSweeper({ db, clock, log: silentLogger, intervalMs: 60_000, batch: 1000 }).sweep();
  for (;;) {
    const claimed = claimDue(db, 'dsp_bench', now, 60_000, 1000);
    if (claimed.length === 0) break;
    transaction(db, () => {
      for (const c of claimed) {
        countAttemptStart(db, c.outboxId, 'dsp_bench');
        const id = recordAttemptStart(db, {
          workspaceId: c.workspaceId,
          eventId: c.eventId,
          eventType: c.eventType,
          endpointId: c.endpointId,
          endpointUrl: 'https://hooks.example.com/voice',
          attempt: c.attempt,
          createdAt: now,
        });
        settleDelivery(db, id, { statusCode: 200, durationMs: 40, error: null, responseBody: 'ok', outcome: 'delivered' });
        settle(db, c.outboxId, 'dsp_bench', { state: 'delivered' }, now);
      }
    });
  }
  const someEvent = String(db.prepare('SELECT event_id FROM webhook_deliveries ORDER BY seq LIMIT 1 OFFSET 1000').get()!.event_id);
  const indexed = filterMs(db, someEvent);
  db.exec('DROP INDEX webhook_deliveries_event');
  const unindexed = filterMs(db, someEvent);
  db.exec('CREATE INDEX webhook_deliveries_event ON webhook_deliveries(workspace_id, event_id, seq)');

  const table: string[][] = [];
  table.push(snapshot(db, `after ${fmt(SESSIONS)} sessions, expired, each event sent once`));
  db.prepare('PRAGMA wal_checkpoint(TRUNCATE)').all();
  table.push(snapshot(db, 'the same, WAL checkpointed'));

  now += 31 * DAY;
  const pruner = createPruner({
    db,
    clock,
    log: silentLogger,
    retention: config.retention,
    idempotencyTtlMs: config.idempotencyTtlSeconds * 1000,
  });
  const stall = monitorEventLoopDelay({ resolution: 1 });
  stall.enable();
  const pruneStarted = performance.now();
  const summary = await pruner.prune();
  const pruneS = (performance.now() - pruneStarted) / 1000;
  stall.disable();
  table.push(snapshot(db, 'after the pruning pass 31 days later (defaults)'));
  db.close();

  console.log(
    `\n${fmt(SESSIONS)} sessions created in ${fmt(createdS, 1)} s; pruning pass: ${fmt(pruneS, 1)} s, ${fmt(summary.freedPages)} pages ` +
      `freed, event-loop delay during it p50 ${fmt(stall.percentile(50) / 1e6, 1)} ms, p99 ${fmt(stall.percentile(99) / 1e6, 1)} ms, max ` +
      `${fmt(stall.max / 1e6, 1)} ms (batch ${config.retention.batchRows} rows; load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')})`,
  );
  printTable(['state', 'file', 'WAL', 'free pages', 'sessions', 'idempotency keys', 'events', 'outbox', 'delivery log'], table, [
    'left',
    'right',
    'right',
    'right',
    'right',
    'right',
    'right',
    'right',
    'right',
  ]);
  printTable(
    ['delivery log ?eventId= (20 rows, median of 50)', 'ms'],
    [
      ['without the index (before migration 012)', fmt(unindexed, 2)],
      ['with webhook_deliveries_event', fmt(indexed, 2)],
    ],
  );
  rmSync(dir, { recursive: true, force: true });
}

main().catch((err: unknown) => {
  console.error(err);
  rmSync(dir, { recursive: true, force: true });
  process.exit(1);
});
