import type { Database } from '../db/database.ts';
import { transaction } from '../db/database.ts';
import { stmt } from '../db/statements.ts';
import { newId } from '../../lib/ids.ts';
import { stringifyJson } from '../../lib/json-text.ts';
import { SESSION_EVENTS, SESSION_STATUSES, transition, type SessionEvent, type SessionStatus } from '../sessions/state-machine.ts';

/** A session as stored. Times are Unix ms; null until the moment applies. */
export interface SessionRecord {
  id: string;
  workspaceId: string;
  deploymentId: string;
  status: SessionStatus;
  metadata: Record<string, unknown>;
  url: string;
  createdAt: number;
  expiresAt: number;
  sentAt: number | null;
  clickedAt: number | null;
  startedAt: number | null;
  completedAt: number | null;
  expiredAt: number | null;
  response: SessionResponse | null;
}

/** The response record of a completed interview (spec: `response`, id `rsp_`). */
export interface SessionResponse {
  id: string;
  status: 'COMPLETED';
  transcriptKey: string;
  summary: string;
}

export interface NewSession {
  id: string;
  workspaceId: string;
  deploymentId: string;
  metadata: Record<string, unknown>;
  url: string;
  createdAt: number;
  expiresAt: number;
  /** Created by a connect call: provisional until a spawn succeeds (docs/session-states.md). */
  provisional?: boolean;
}

/** `linkTokenSha256`: the digest of the capability in the session's URL (store/link-tokens.ts). */
export function insertSession(db: Database, s: NewSession, linkTokenSha256: string | null = null): void {
  stmt(
    db,
    `INSERT INTO sessions (id, workspace_id, deployment_id, status, metadata_json, url, created_at, expires_at, updated_at, link_token_sha256, provisional)
     VALUES (?, ?, ?, 'PENDING', ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    s.id,
    s.workspaceId,
    s.deploymentId,
    stringifyJson(s.metadata),
    s.url,
    s.createdAt,
    s.expiresAt,
    s.createdAt,
    linkTokenSha256,
    s.provisional ? 1 : 0,
  );
}

const nullableNumber = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

export function getSession(db: Database, id: string): SessionRecord | null {
  const row = stmt(
    db,
    `SELECT s.*, r.id AS response_id, r.status AS response_status, r.transcript_key, r.summary
     FROM sessions s LEFT JOIN responses r ON r.session_id = s.id WHERE s.id = ?`,
  ).get(id);
  if (!row) return null;
  return {
    id: String(row.id),
    workspaceId: String(row.workspace_id),
    deploymentId: String(row.deployment_id),
    status: row.status as SessionStatus,
    metadata: JSON.parse(String(row.metadata_json)) as Record<string, unknown>,
    url: String(row.url),
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    sentAt: nullableNumber(row.sent_at),
    clickedAt: nullableNumber(row.clicked_at),
    startedAt: nullableNumber(row.started_at),
    completedAt: nullableNumber(row.completed_at),
    expiredAt: nullableNumber(row.expired_at),
    response:
      row.response_id === null
        ? null
        : { id: String(row.response_id), status: 'COMPLETED', transcriptKey: String(row.transcript_key), summary: String(row.summary) },
  };
}

/** The column that records when each moving event happened. */
const EVENT_TIME_COLUMN: Partial<Record<SessionEvent, string>> = {
  link_sent: 'sent_at',
  clicked: 'clicked_at',
  connected: 'started_at',
  completed: 'completed_at',
  expired: 'expired_at',
};

export type EventResult =
  | { kind: 'moved'; from: SessionStatus; session: SessionRecord }
  | { kind: 'stayed'; session: SessionRecord }
  | { kind: 'refused'; reason: string; session: SessionRecord }
  | { kind: 'not_found' };

/**
 * Applies one event through the state machine, in one transaction. The only writer of `status`.
 * `completed` needs the interview's response; it is stored with the move.
 */
export function applySessionEvent(
  db: Database,
  sessionId: string,
  event: SessionEvent,
  now: number,
  extra: { response?: { transcriptKey: string; summary: string } } = {},
): EventResult {
  return transaction(db, () => {
    const current = getSession(db, sessionId);
    if (!current) return { kind: 'not_found' };
    const decision = transition(current.status, event);
    if (decision.kind === 'stay') return { kind: 'stayed', session: current };
    if (decision.kind === 'refuse') return { kind: 'refused', reason: decision.reason, session: current };
    if (event === 'completed') {
      if (!extra.response) throw new Error('a completed event needs the response');
      stmt(db, 'INSERT INTO responses (id, session_id, status, transcript_key, summary, created_at) VALUES (?, ?, ?, ?, ?, ?)').run(
        newId('rsp'),
        sessionId,
        'COMPLETED',
        extra.response.transcriptKey,
        extra.response.summary,
        now,
      );
    }
    const column = EVENT_TIME_COLUMN[event];
    const sql = column
      ? `UPDATE sessions SET status = ?, ${column} = ?, updated_at = ? WHERE id = ?`
      : 'UPDATE sessions SET status = ?, updated_at = ? WHERE id = ?';
    if (column) stmt(db, sql).run(decision.to, now, now, sessionId);
    else stmt(db, sql).run(decision.to, now, sessionId);
    return { kind: 'moved', from: current.status, session: getSession(db, sessionId)! };
  });
}

/**
 * For each event, the moves the state machine allows, as one guarded UPDATE: `status` becomes the
 * machine's answer for the current status, and only rows in a moving status are touched. Built from
 * `transition` itself, so the table in state-machine.ts stays the only source of the rules.
 */
function guardedUpdateSql(event: Exclude<SessionEvent, 'completed'>): string | null {
  const moves = SESSION_STATUSES.flatMap((from) => {
    const t = transition(from, event);
    return t.kind === 'move' ? [[from, t.to] as const] : [];
  });
  if (moves.length === 0) return null;
  const column = EVENT_TIME_COLUMN[event];
  const cases = moves.map(([from, to]) => `WHEN '${from}' THEN '${to}'`).join(' ');
  const inList = moves.map(([from]) => `'${from}'`).join(', ');
  return `UPDATE sessions SET status = CASE status ${cases} END, ${column ? `${column} = :now, ` : ''}updated_at = :now
    WHERE id = :id AND status IN (${inList})`;
}
const GUARDED_SQL = new Map(
  SESSION_EVENTS.filter((e) => e !== 'completed').map((e) => [e, guardedUpdateSql(e as Exclude<SessionEvent, 'completed'>)]),
);

/**
 * The same move as applySessionEvent for an event that needs no extra data, on the hot path: one
 * guarded UPDATE, and a read only when nothing moved (to say why). It returns no record.
 */
export function applyStatusEvent(
  db: Database,
  sessionId: string,
  event: Exclude<SessionEvent, 'completed'>,
  now: number,
): 'moved' | 'stayed' | 'refused' | 'not_found' {
  const sql = GUARDED_SQL.get(event);
  if (sql && Number(stmt(db, sql).run({ id: sessionId, now }).changes) === 1) return 'moved';
  const row = stmt(db, 'SELECT status FROM sessions WHERE id = ?').get(sessionId);
  if (!row) return 'not_found';
  const decision = transition(row.status as SessionStatus, event);
  // A move here means another writer changed the status between the two statements: try again.
  if (decision.kind === 'move') return applyStatusEvent(db, sessionId, event, now);
  return decision.kind === 'stay' ? 'stayed' : 'refused';
}

/** The 201 carrying the link reached the client (PENDING → SENT). */
export const markSent = (db: Database, sessionId: string, now: number): 'moved' | 'stayed' | 'refused' | 'not_found' =>
  applyStatusEvent(db, sessionId, 'link_sent', now);
/**
 * The respondent opened the page. Idempotent: a second open changes nothing. An opened page is an
 * offered interview, so a provisional session (docs/session-states.md) stops being one.
 */
export function markClicked(db: Database, sessionId: string, now: number): EventResult {
  return transaction(db, () => {
    const result = applySessionEvent(db, sessionId, 'clicked', now);
    if (result.kind === 'moved' || result.kind === 'stayed')
      stmt(db, 'UPDATE sessions SET provisional = 0 WHERE id = ? AND provisional = 1').run(sessionId);
    return result;
  });
}
/** A connect call spawned the pipeline. Idempotent. */
export const markStarted = (db: Database, sessionId: string, now: number): EventResult =>
  applySessionEvent(db, sessionId, 'connected', now);
/** The pipeline reported failure: the session stays STARTED (checked, not moved). */
export const markFailed = (db: Database, sessionId: string, now: number): EventResult => applySessionEvent(db, sessionId, 'failed', now);
/** The pipeline reported completion with the response. Idempotent: a repeat keeps the first response. */
export const markCompleted = (
  db: Database,
  sessionId: string,
  response: { transcriptKey: string; summary: string },
  now: number,
): EventResult => applySessionEvent(db, sessionId, 'completed', now, { response });
/** expiresAt passed. Idempotent. */
export const markExpired = (db: Database, sessionId: string, now: number): EventResult => applySessionEvent(db, sessionId, 'expired', now);

/**
 * A session's connect attempt and its outcome so far (docs/connect.md, "one outcome per attempt").
 * `attempt` counts from 0; `failedAt` is set once the worker reported this attempt failed.
 */
export interface AttemptState {
  attempt: number;
  failedAt: number | null;
}

export function attemptStateOf(db: Database, sessionId: string): AttemptState {
  const row = stmt(db, 'SELECT attempt, failed_at FROM sessions WHERE id = ?').get(sessionId);
  return { attempt: row ? Number(row.attempt) : 0, failedAt: row ? nullableNumber(row.failed_at) : null };
}

/** The attempt a connect starts: the current one, or the next after a reported failure (a retry). */
export function nextConnectAttempt(db: Database, sessionId: string): number {
  const { attempt, failedAt } = attemptStateOf(db, sessionId);
  return attempt + (failedAt === null ? 0 : 1);
}

/** The route a spawn took (the worker's substrate). */
export type SessionRoute = 'hosted' | 'self_hosted';

/**
 * A spawn succeeded: STARTED (through the state machine), the route recorded, the session no longer
 * provisional, and, when this connect opened a new attempt, the attempt stored with the last failure
 * cleared. One transaction.
 */
export function markConnected(db: Database, sessionId: string, spawn: { route: SessionRoute; attempt: number }, now: number): EventResult {
  return transaction(db, () => {
    // A connect proves the page open: recorded here when it was not before (a session connect created).
    applyStatusEvent(db, sessionId, 'clicked', now);
    const result = markStarted(db, sessionId, now);
    if (result.kind === 'refused' || result.kind === 'not_found') return result;
    // A bot took it: a provisional session (created by connect) is now an interview like any other.
    stmt(db, 'UPDATE sessions SET route = ?, provisional = 0 WHERE id = ?').run(spawn.route, sessionId);
    stmt(db, 'UPDATE sessions SET attempt = ?, failed_at = NULL, failure_reason = NULL WHERE id = ? AND attempt < ?').run(
      spawn.attempt,
      sessionId,
      spawn.attempt,
    );
    return result;
  });
}

/**
 * The worker reported the current attempt failed: records when and why, once per attempt.
 * Returns false when this attempt's failure was already recorded (a repeated report).
 */
export function recordAttemptFailure(db: Database, sessionId: string, reason: string, now: number): boolean {
  const marked = stmt(db, 'UPDATE sessions SET failed_at = ?, failure_reason = ?, updated_at = ? WHERE id = ? AND failed_at IS NULL').run(
    now,
    reason,
    now,
    sessionId,
  );
  return Number(marked.changes) === 1;
}

/** True for a session that connect created and no spawn has taken yet (docs/session-states.md). */
export function isProvisional(db: Database, sessionId: string): boolean {
  return Number(stmt(db, 'SELECT provisional FROM sessions WHERE id = ?').get(sessionId)?.provisional ?? 0) === 1;
}

/**
 * Deletes a provisional session (connect created it, no spawn ever took it): it was never offered
 * to anyone, so its expiry is no customer's event. Called by the sweeper once its expiry is due.
 * Returns false, touching nothing, for any other session.
 */
export function discardProvisionalSession(db: Database, sessionId: string): boolean {
  return transaction(db, () => {
    const row = stmt(db, 'SELECT provisional, status FROM sessions WHERE id = ?').get(sessionId);
    if (!row || Number(row.provisional) !== 1 || row.status === 'STARTED' || row.status === 'COMPLETED') return false;
    stmt(db, 'DELETE FROM idempotency_keys WHERE session_id = ?').run(sessionId);
    // Its report tokens go with it (ON DELETE CASCADE): a failed spawn left none.
    stmt(db, 'DELETE FROM sessions WHERE id = ?').run(sessionId);
    return true;
  });
}

/**
 * Ids of sessions whose expiry is due (for the expiry sweeper; the rule is sessions/expiry-rule.ts):
 * not started and past expiresAt, or STARTED and past expiresAt + the grace.
 */
export function listExpirableSessionIds(db: Database, now: number, limit = 100, startedGraceMs = 0): string[] {
  return stmt(
    db,
    `SELECT id FROM sessions
    WHERE (status IN ('PENDING', 'SENT', 'CLICKED') AND expires_at <= :now) OR (status = 'STARTED' AND expires_at <= :startedBefore)
    ORDER BY expires_at LIMIT :limit`,
  )
    .all({ now, startedBefore: now - startedGraceMs, limit })
    .map((r) => String(r.id));
}

/**
 * Retention (api-stub/retention): deletes up to `limit` COMPLETED or EXPIRED sessions that finished
 * at or before `cutoff`, with their response, their report tokens (ON DELETE CASCADE) and any
 * idempotency key still naming them. Returns how many sessions went. Their webhook events stay: they
 * carry their own copy and follow the webhook retention.
 */
export function deleteFinishedSessions(db: Database, cutoff: number, limit: number): number {
  const ids = stmt(
    db,
    `SELECT id FROM sessions WHERE status IN ('COMPLETED', 'EXPIRED')
    AND COALESCE(completed_at, expired_at) <= ? LIMIT ?`,
  )
    .all(cutoff, limit)
    .map((r) => String(r.id));
  if (ids.length === 0) return 0;
  const list = JSON.stringify(ids);
  stmt(db, 'DELETE FROM idempotency_keys WHERE session_id IN (SELECT value FROM json_each(?))').run(list);
  stmt(db, 'DELETE FROM responses WHERE session_id IN (SELECT value FROM json_each(?))').run(list);
  return Number(stmt(db, 'DELETE FROM sessions WHERE id IN (SELECT value FROM json_each(?))').run(list).changes);
}
