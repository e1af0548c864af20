import type { Database } from '../db/database.ts';
import { stmt } from '../db/statements.ts';
import { serializeEvent, type WebhookEvent } from './events.ts';

/**
 * The outbox: events are rows before they are requests. `enqueueEvent` is called inside the same
 * transaction as the state change that caused the event, so a crash can lose neither; the
 * dispatcher claims due rows with a lease, so two dispatchers never send the same row at once.
 */
export interface EnqueueResult {
  /** False when this session already has an event of this type (a repeated report or sweep). */
  inserted: boolean;
  endpoints: number;
}

/** `attempt` is the session's connect attempt for interview.failed (one per attempt), else 0. */
export function enqueueEvent(
  db: Database,
  workspaceId: string,
  event: WebhookEvent<object>,
  nowMs: number,
  sessionId: string | null = null,
  attempt = 0,
): EnqueueResult {
  const inserted = stmt(
    db,
    `INSERT INTO webhook_events (id, workspace_id, type, session_id, attempt, payload, created_at)
    VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
  ).run(event.id, workspaceId, event.type, sessionId, attempt, serializeEvent(event), nowMs);
  if (Number(inserted.changes) === 0) return { inserted: false, endpoints: 0 };
  const fanout = stmt(
    db,
    `INSERT INTO webhook_outbox (event_id, endpoint_id, state, next_attempt_at, updated_at)
    SELECT ?, id, 'pending', ?, ? FROM webhook_endpoints WHERE workspace_id = ?`,
  ).run(event.id, nowMs, nowMs, workspaceId);
  return { inserted: true, endpoints: Number(fanout.changes) };
}

export interface ClaimedDelivery {
  outboxId: number;
  eventId: string;
  eventType: string;
  workspaceId: string;
  payload: string;
  endpointId: string;
  /** The endpoint as it is now (url and secrets are read at send time, so rotation applies at once). */
  /** `storedSecrets` is the column as stored: sealed (opened by the dispatcher) or a legacy plain list. */
  endpoint: { url: string; storedSecrets: string; retriesEnabled: boolean } | null;
  /** Number of this attempt, from 1. */
  attempt: number;
}

/** Claims up to `limit` due rows for `owner` until `nowMs + leaseMs`; one UPDATE, so claims never overlap. */
export function claimDue(db: Database, owner: string, nowMs: number, leaseMs: number, limit: number): ClaimedDelivery[] {
  const rows = stmt(
    db,
    `UPDATE webhook_outbox SET lease_owner = ?, lease_until = ?, updated_at = ?
    WHERE id IN (
      SELECT id FROM webhook_outbox
      WHERE state = 'pending' AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until <= ?)
      ORDER BY next_attempt_at, id LIMIT ?)
    RETURNING id, event_id, endpoint_id, attempts`,
  ).all(owner, nowMs + leaseMs, nowMs, nowMs, nowMs, limit);
  return rows
    .map((row) => {
      const event = stmt(db, 'SELECT workspace_id, type, payload FROM webhook_events WHERE id = ?').get(row.event_id as string)!;
      const ep = stmt(db, 'SELECT url, secrets_json, retries_enabled FROM webhook_endpoints WHERE id = ?').get(row.endpoint_id as string);
      return {
        outboxId: Number(row.id),
        eventId: String(row.event_id),
        eventType: String(event.type),
        workspaceId: String(event.workspace_id),
        payload: String(event.payload),
        endpointId: String(row.endpoint_id),
        endpoint: ep
          ? { url: String(ep.url), storedSecrets: String(ep.secrets_json), retriesEnabled: Number(ep.retries_enabled) === 1 }
          : null,
        attempt: Number(row.attempts) + 1,
      };
    })
    .sort((a, b) => a.outboxId - b.outboxId);
}

export type Settlement = { state: 'delivered' } | { state: 'dropped' } | { state: 'pending'; nextAttemptAt: number };

/**
 * Counts an attempt as it starts, in the transaction that logs it: an attempt cut short by a kill
 * still counts, so the one sent after it is numbered next, not 1 again (issue 41).
 */
export function countAttemptStart(db: Database, outboxId: number, owner: string): void {
  stmt(db, 'UPDATE webhook_outbox SET attempts = attempts + 1 WHERE id = ? AND lease_owner = ?').run(outboxId, owner);
}

/** Records the attempt's result; only the lease holder may settle (false when the lease was lost). */
export function settle(db: Database, outboxId: number, owner: string, settlement: Settlement, nowMs: number): boolean {
  const next = settlement.state === 'pending' ? settlement.nextAttemptAt : nowMs;
  const result = stmt(
    db,
    `UPDATE webhook_outbox SET state = ?, next_attempt_at = ?,
    lease_owner = NULL, lease_until = NULL, updated_at = ? WHERE id = ? AND lease_owner = ?`,
  ).run(settlement.state, next, nowMs, outboxId, owner);
  return Number(result.changes) === 1;
}

/** Gives back leases of rows this owner claimed but did not attempt (on shutdown). */
export function releaseLeases(db: Database, owner: string, outboxIds: readonly number[], nowMs: number): void {
  for (const id of outboxIds) {
    stmt(db, 'UPDATE webhook_outbox SET lease_owner = NULL, lease_until = NULL, updated_at = ? WHERE id = ? AND lease_owner = ?').run(
      nowMs,
      id,
      owner,
    );
  }
}

export function pendingCount(db: Database): number {
  return Number(stmt(db, "SELECT count(*) AS n FROM webhook_outbox WHERE state = 'pending'").get()!.n);
}

/** Opts an endpoint in or out of retries (seed field `retries`; off by default, as the spec says). */
export function setEndpointRetries(db: Database, endpointId: string, enabled: boolean): void {
  stmt(db, 'UPDATE webhook_endpoints SET retries_enabled = ? WHERE id = ?').run(enabled ? 1 : 0, endpointId);
}
