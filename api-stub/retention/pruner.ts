import type { Logger } from '../../lib/log.ts';
import type { Clock } from '../../lib/time.ts';
import { transaction, type Database } from '../db/database.ts';
import {
  daysMs,
  pruneDeliveryLogBatch,
  pruneFinishedSessionBatch,
  pruneIdempotencyKeyBatch,
  pruneRateCounterBatch,
  pruneWebhookEventBatch,
} from './prune-store.ts';
import type { RetentionConfig } from './retention-config.ts';

/**
 * Retention on a schedule (docs/api.md, "Retention"): a pass at start and then every
 * `intervalSeconds` deletes what is past its retention, in batches of `batchRows`, each its own
 * short transaction, yielding to requests between batches so that a large backlog never holds the
 * database for long. After a pass that deleted anything, freed pages go back to the file system
 * (incremental vacuum, in steps) and the WAL is checkpointed and truncated.
 */
export interface PruneSummary {
  idempotencyKeys: number;
  sessions: number;
  webhookEvents: number;
  outboxRows: number;
  deliveries: number;
  rateCounters: number;
  /** Pages returned to the file system by the incremental vacuum. */
  freedPages: number;
}

export interface Pruner {
  start(): void;
  /** Stops the schedule and waits for a pass under way (it stops at its next batch). */
  stop(): Promise<void>;
  /** One whole pass now (tests, and the schedule). */
  prune(): Promise<PruneSummary>;
}

export interface PrunerOptions {
  db: Database;
  clock: Clock;
  log: Logger;
  retention: Readonly<RetentionConfig>;
  /** IDEMPOTENCY_TTL_SECONDS in ms: keys this old are no longer honoured. */
  idempotencyTtlMs: number;
}

// The longest rate window is an hour; its counters are of no use an hour after it ended.
const RATE_WINDOW_KEEP_MS = 2 * 3_600_000;
const VACUUM_STEP_PAGES = 256;

const yieldToRequests = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export function createPruner(options: PrunerOptions): Pruner {
  const { db, log, retention } = options;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<PruneSummary> | null = null;
  // Set by stop(): a pass under way ends at its next batch.
  let halting = false;

  /** Runs `batch` until it deletes fewer than batchRows; each batch in its own transaction. */
  const drain = async (batch: () => number): Promise<number> => {
    let total = 0;
    for (;;) {
      const n = transaction(db, batch);
      total += n;
      if (n < retention.batchRows || halting) return total;
      await yieldToRequests();
    }
  };

  const pageCount = (pragma: string): number => Number(Object.values(db.prepare(`PRAGMA ${pragma}`).get() ?? {})[0] ?? 0);

  const giveBackSpace = async (): Promise<number> => {
    let freed = 0;
    // Only a file created with auto_vacuum = INCREMENTAL (database.ts) can shrink; others reuse free pages.
    if (pageCount('auto_vacuum') === 2) {
      for (let free = pageCount('freelist_count'); free > 0 && !halting;) {
        transaction(db, () => db.prepare(`PRAGMA incremental_vacuum(${VACUUM_STEP_PAGES})`).all());
        const left = pageCount('freelist_count');
        if (left >= free) break; // nothing moved: never spin
        freed += free - left;
        free = left;
        await yieldToRequests();
      }
    }
    // A checkpoint cannot run inside a transaction; group commits close theirs within a turn.
    for (let tries = 0; tries < 20 && db.isTransaction; tries++) await yieldToRequests();
    if (!db.isTransaction) db.prepare('PRAGMA wal_checkpoint(TRUNCATE)').all();
    return freed;
  };

  const pass = async (): Promise<PruneSummary> => {
    const now = options.clock();
    const limit = retention.batchRows;
    const webhookCutoff = now - daysMs(retention.webhookDays);
    const summary: PruneSummary = {
      idempotencyKeys: 0,
      sessions: 0,
      webhookEvents: 0,
      outboxRows: 0,
      deliveries: 0,
      rateCounters: 0,
      freedPages: 0,
    };
    summary.idempotencyKeys = await drain(() => pruneIdempotencyKeyBatch(db, now - options.idempotencyTtlMs, limit));
    summary.sessions = await drain(() => pruneFinishedSessionBatch(db, now - daysMs(retention.sessionDays), limit));
    summary.webhookEvents = await drain(() => {
      const pruned = pruneWebhookEventBatch(db, webhookCutoff, limit);
      summary.outboxRows += pruned.outbox;
      return pruned.events;
    });
    summary.deliveries = await drain(() => pruneDeliveryLogBatch(db, webhookCutoff, limit));
    summary.rateCounters = await drain(() => pruneRateCounterBatch(db, now - RATE_WINDOW_KEEP_MS, limit));
    const deleted = summary.idempotencyKeys + summary.sessions + summary.webhookEvents + summary.deliveries + summary.rateCounters;
    if (deleted > 0) {
      summary.freedPages = await giveBackSpace();
      log.info('retention pruned', { ...summary });
    }
    return summary;
  };

  const prune = (): Promise<PruneSummary> => {
    if (running) return running;
    running = pass().finally(() => {
      running = null;
    });
    return running;
  };

  const scheduled = (): void => {
    prune().catch((err: unknown) => log.warn('retention pass failed; it runs again at the next interval', { err }));
  };

  return {
    prune,
    start() {
      if (timer) return;
      halting = false;
      timer = setInterval(scheduled, retention.intervalSeconds * 1000);
      timer.unref();
      setImmediate(() => {
        if (!halting) scheduled();
      });
    },
    async stop() {
      halting = true;
      if (timer) clearInterval(timer);
      timer = undefined;
      await running?.catch(() => undefined);
    },
  };
}
