import { newId } from '../../lib/ids.ts';
import { isoSeconds } from '../../lib/time.ts';
import type { Database } from '../db/database.ts';
import { stmt } from '../db/statements.ts';

/**
 * The `webhook_deliveries` record of spec section 2: one row per attempt, readable per workspace,
 * newest first, paged by an opaque cursor (the row's sequence number). A row is written before its
 * attempt is sent (`in_flight`) and settled after it, so an attempt cut short by a kill still has
 * its row; the next dispatcher marks it `interrupted` when it sends the event again.
 */
export type DeliveryOutcome = 'delivered' | 'retry_scheduled' | 'dropped';
export type DeliveryState = DeliveryOutcome | 'in_flight' | 'interrupted';

/** The error text of an attempt its process did not live to finish. */
export const INTERRUPTED_ERROR = 'the api-stub stopped before this attempt finished; the event is sent again (at least once)';

export interface DeliveryRecord {
  workspaceId: string;
  eventId: string;
  eventType: string;
  endpointId: string;
  endpointUrl: string;
  attempt: number;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  responseBody: string | null;
  outcome: DeliveryState;
  createdAt: number;
}

/** The public shape of one row (GET /api/v2/workspace/webhook-deliveries): no internal ids, an ISO time. */
export type DeliveryView = Omit<DeliveryRecord, 'workspaceId' | 'endpointId' | 'createdAt'> & { id: string; createdAt: string };

export function recordDelivery(db: Database, record: DeliveryRecord): string {
  const id = newId('del');
  stmt(
    db,
    `INSERT INTO webhook_deliveries (id, workspace_id, event_id, event_type, endpoint_id, endpoint_url, attempt,
    status_code, duration_ms, error, response_body, outcome, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    id,
    record.workspaceId,
    record.eventId,
    record.eventType,
    record.endpointId,
    record.endpointUrl,
    record.attempt,
    record.statusCode,
    record.durationMs,
    record.error,
    record.responseBody,
    record.outcome,
    record.createdAt,
  );
  return id;
}

/**
 * Logs an attempt about to be sent, and first marks as interrupted any attempt of the same event to
 * the same endpoint still in flight: the dispatcher now holding the lease is the only sender, so such
 * a row was left by one that died. Returns the new row's id for `settleDelivery`.
 */
export function recordAttemptStart(
  db: Database,
  record: Omit<DeliveryRecord, 'statusCode' | 'durationMs' | 'error' | 'responseBody' | 'outcome'>,
): string {
  stmt(
    db,
    `UPDATE webhook_deliveries SET outcome = 'interrupted', error = ? WHERE event_id = ? AND endpoint_id = ? AND outcome = 'in_flight'`,
  ).run(INTERRUPTED_ERROR, record.eventId, record.endpointId);
  return recordDelivery(db, { ...record, statusCode: null, durationMs: 0, error: null, responseBody: null, outcome: 'in_flight' });
}

/** Writes what came of an attempt logged by `recordAttemptStart`. */
export function settleDelivery(
  db: Database,
  id: string,
  result: Pick<DeliveryRecord, 'statusCode' | 'durationMs' | 'error' | 'responseBody'> & { outcome: DeliveryOutcome },
): void {
  stmt(db, `UPDATE webhook_deliveries SET status_code = ?, duration_ms = ?, error = ?, response_body = ?, outcome = ? WHERE id = ?`).run(
    result.statusCode,
    result.durationMs,
    result.error,
    result.responseBody,
    result.outcome,
    id,
  );
}

export interface DeliveryPage {
  data: DeliveryView[];
  /** Pass as `cursor` to get the next (older) page; null when this page is the last. */
  nextCursor: string | null;
}

export function encodeCursor(seq: number): string {
  return Buffer.from(`seq:${seq}`).toString('base64url');
}

/** The sequence number inside a cursor, or null when it is not one of ours. */
export function decodeCursor(cursor: string): number | null {
  const match = /^seq:(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  return match ? Number(match[1]) : null;
}

export function listDeliveries(
  db: Database,
  workspaceId: string,
  options: { limit: number; beforeSeq?: number | null; eventId?: string | null },
): DeliveryPage {
  const beforeSeq = options.beforeSeq ?? Number.MAX_SAFE_INTEGER;
  // Two statements, so that each uses its index (an `? IS NULL OR` filter would use neither well):
  // webhook_deliveries_event (migration 012) for one event, webhook_deliveries_workspace otherwise.
  const rows = options.eventId
    ? stmt(
        db,
        `SELECT * FROM webhook_deliveries WHERE workspace_id = ? AND event_id = ? AND seq < ?
        ORDER BY seq DESC LIMIT ?`,
      ).all(workspaceId, options.eventId, beforeSeq, options.limit + 1)
    : stmt(
        db,
        `SELECT * FROM webhook_deliveries WHERE workspace_id = ? AND seq < ?
        ORDER BY seq DESC LIMIT ?`,
      ).all(workspaceId, beforeSeq, options.limit + 1);
  const page = rows.slice(0, options.limit);
  const last = page.at(-1);
  return {
    data: page.map((r) => ({
      id: String(r.id),
      eventId: String(r.event_id),
      eventType: String(r.event_type),
      endpointUrl: String(r.endpoint_url),
      attempt: Number(r.attempt),
      statusCode: r.status_code === null ? null : Number(r.status_code),
      durationMs: Number(r.duration_ms),
      error: r.error === null ? null : String(r.error),
      responseBody: r.response_body === null ? null : String(r.response_body),
      outcome: String(r.outcome) as DeliveryState,
      createdAt: isoSeconds(Number(r.created_at)),
    })),
    nextCursor: rows.length > options.limit && last ? encodeCursor(Number(last.seq)) : null,
  };
}
