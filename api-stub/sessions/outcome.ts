import { HttpError } from '../../lib/errors.ts';
import { transaction, type Database } from '../db/database.ts';
import { attemptStateOf, getSession, markCompleted, markFailed, recordAttemptFailure, type SessionRecord } from '../store/sessions.ts';
import { completedEvent, failedEvent } from '../webhooks/events.ts';
import { enqueueEvent } from '../webhooks/outbox-store.ts';

/**
 * A worker's report of a session's outcome (docs/contracts.md), applied in one transaction with
 * the webhook it causes (outbox). Completed: STARTED → COMPLETED with the response and
 * interview.completed. Failed: the session stays STARTED, failed_at is set, interview.failed.
 * A repeated report changes nothing and enqueues nothing; the other outcome after one is a 409,
 * until a new connect (the respondent retrying) opens a new attempt (api-stub/connect/connect.ts).
 */
/** `attempt` echoes the spawn body's; absent means the current attempt (older workers, the reaper). */
export type OutcomeReport =
  | { status: 'completed'; attempt?: number | undefined; response: { transcriptKey: string; summary: string } }
  | { status: 'failed'; attempt?: number | undefined; reason: string; message?: string | undefined };

export interface OutcomeResult {
  session: SessionRecord;
  /** True when this report changed something (and enqueued a webhook). */
  applied: boolean;
}

const facts = (s: SessionRecord) => ({ sessionId: s.id, interviewId: s.deploymentId, metadata: s.metadata });

function conflict(reason: string): HttpError {
  return new HttpError('outcome_conflict', reason);
}

export function applyOutcome(db: Database, sessionId: string, report: OutcomeReport, now: number): OutcomeResult {
  return transaction(db, () => {
    const before = getSession(db, sessionId);
    if (!before) throw new HttpError('session_not_found', `No session ${JSON.stringify(sessionId)} exists.`);
    // A late report of an attempt the respondent has already retried past changes nothing.
    if (report.attempt !== undefined && report.attempt < attemptStateOf(db, sessionId).attempt) return { session: before, applied: false };
    if (report.status === 'completed') {
      if (attemptStateOf(db, sessionId).failedAt !== null)
        throw conflict('This attempt was already reported as failed; a completed report can only follow a new connect.');
      const result = markCompleted(db, sessionId, report.response, now);
      if (result.kind === 'refused') throw conflict(result.reason);
      if (result.kind === 'not_found') throw new HttpError('session_not_found', `No session ${JSON.stringify(sessionId)} exists.`);
      if (result.kind === 'stayed') return { session: result.session, applied: false };
      enqueueEvent(db, before.workspaceId, completedEvent(facts(result.session), result.session.completedAt ?? now, now), now, sessionId);
      return { session: result.session, applied: true };
    }
    if (before.status === 'COMPLETED') throw conflict('The session was already reported as completed; a failed report cannot follow.');
    const result = markFailed(db, sessionId, now);
    if (result.kind === 'refused') throw conflict(result.reason);
    if (result.kind === 'not_found') throw new HttpError('session_not_found', `No session ${JSON.stringify(sessionId)} exists.`);
    if (!recordAttemptFailure(db, sessionId, report.reason, now)) return { session: result.session, applied: false };
    enqueueEvent(
      db,
      before.workspaceId,
      failedEvent(facts(before), { reason: report.reason, message: report.message ?? null }, now, now),
      now,
      sessionId,
      attemptStateOf(db, sessionId).attempt,
    );
    return { session: result.session, applied: true };
  });
}
