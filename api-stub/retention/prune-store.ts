import type { Database } from '../db/database.ts';
import { stmt } from '../db/statements.ts';
import { deleteFinishedSessions } from '../store/sessions.ts';

/**
 * One batch of each kind of pruning: at most `limit` rows (sessions, events) chosen by the indexes of
 * migration 012, deleted with what depends on them. The pruner runs each in its own short transaction
 * and yields to requests between batches. A batch smaller than `limit` means nothing is left to prune.
 */
const DAY_MS = 86_400_000;
export const daysMs = (days: number): number => days * DAY_MS;

/** Idempotency keys at or past their TTL: never honoured again (store/idempotency.ts). */
export function pruneIdempotencyKeyBatch(db: Database, cutoff: number, limit: number): number {
  return Number(
    stmt(
      db,
      `DELETE FROM idempotency_keys WHERE (workspace_id, idempotency_key) IN (
    SELECT workspace_id, idempotency_key FROM idempotency_keys WHERE created_at <= ? LIMIT ?)`,
    ).run(cutoff, limit).changes,
  );
}

/** Finished sessions past their retention; store/sessions.ts, the only writer of sessions, deletes them. */
export function pruneFinishedSessionBatch(db: Database, cutoff: number, limit: number): number {
  return deleteFinishedSessions(db, cutoff, limit);
}

/**
 * Webhook events created at or before `cutoff` none of whose outbox rows is still pending, with those
 * (delivered or dropped) outbox rows. An event still to be sent is kept, whatever its age.
 */
export function pruneWebhookEventBatch(db: Database, cutoff: number, limit: number): { events: number; outbox: number } {
  const ids = stmt(
    db,
    `SELECT e.id FROM webhook_events e WHERE e.created_at <= ?
    AND NOT EXISTS (SELECT 1 FROM webhook_outbox o WHERE o.event_id = e.id AND o.state = 'pending') LIMIT ?`,
  )
    .all(cutoff, limit)
    .map((r) => String(r.id));
  if (ids.length === 0) return { events: 0, outbox: 0 };
  const list = JSON.stringify(ids);
  const outbox = Number(
    stmt(db, `DELETE FROM webhook_outbox WHERE state != 'pending' AND event_id IN (SELECT value FROM json_each(?))`).run(list).changes,
  );
  const events = Number(stmt(db, 'DELETE FROM webhook_events WHERE id IN (SELECT value FROM json_each(?))').run(list).changes);
  return { events, outbox };
}

/** Delivery-log rows written at or before `cutoff`, except an attempt still in flight. */
export function pruneDeliveryLogBatch(db: Database, cutoff: number, limit: number): number {
  return Number(
    stmt(
      db,
      `DELETE FROM webhook_deliveries WHERE seq IN (
    SELECT seq FROM webhook_deliveries WHERE created_at <= ? AND outcome != 'in_flight' LIMIT ?)`,
    ).run(cutoff, limit).changes,
  );
}

/**
 * Rate windows that ended before `cutoff`. A workspace's own next call drops its older windows
 * (rate-limit/consume.ts); this clears those of workspaces that stopped calling.
 */
export function pruneRateCounterBatch(db: Database, cutoff: number, limit: number): number {
  return Number(
    stmt(
      db,
      `DELETE FROM rate_counters WHERE (workspace_id, window_kind, window_start) IN (
    SELECT workspace_id, window_kind, window_start FROM rate_counters WHERE window_start < ? LIMIT ?)`,
    ).run(cutoff, limit).changes,
  );
}
