import { newId } from '../../lib/ids.ts';
import { isoSeconds, unixSeconds } from '../../lib/time.ts';
import { stringifyJson } from '../../lib/json-text.ts';

/**
 * Webhook events (spec section 6) as pure values: the envelope of section 2 (`evt_` id, `created`
 * in Unix seconds) and one `data` shape per type. Serialized once when enqueued; every attempt sends
 * those exact bytes.
 */
export const EVENT_TYPES = ['interview.completed', 'interview.failed', 'session.expired'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface WebhookEvent<D = Record<string, unknown>> {
  id: string;
  type: EventType;
  created: number;
  data: D;
}

/** The session facts every event carries. */
export interface SessionFacts {
  sessionId: string;
  interviewId: string;
  metadata: Record<string, unknown>;
}

/** Spec section 6, exactly. */
export interface InterviewCompletedData extends SessionFacts {
  completedAt: string;
}

/** Ours (the spec leaves it open): when and why the voice pipeline failed, as the worker reported. */
export interface InterviewFailedData extends SessionFacts {
  failedAt: string;
  reason: string;
  message: string | null;
}

/** Ours: when the link expired, and how far the respondent had got (the status before EXPIRED). */
export interface SessionExpiredData extends SessionFacts {
  expiredAt: string;
  expiresAt: string;
  lastStatus: string;
}

export function buildEvent<D extends object>(type: EventType, data: D, nowMs: number): WebhookEvent<D> {
  return { id: newId('evt'), type, created: unixSeconds(nowMs), data };
}

export function completedEvent(facts: SessionFacts, completedAtMs: number, nowMs: number): WebhookEvent<InterviewCompletedData> {
  return buildEvent('interview.completed', { ...pick(facts), completedAt: isoSeconds(completedAtMs) }, nowMs);
}

export function failedEvent(
  facts: SessionFacts,
  failure: { reason: string; message: string | null },
  failedAtMs: number,
  nowMs: number,
): WebhookEvent<InterviewFailedData> {
  return buildEvent(
    'interview.failed',
    { ...pick(facts), failedAt: isoSeconds(failedAtMs), reason: failure.reason, message: failure.message },
    nowMs,
  );
}

export function expiredEvent(
  facts: SessionFacts,
  expiry: { expiresAtMs: number; expiredAtMs: number; lastStatus: string },
  nowMs: number,
): WebhookEvent<SessionExpiredData> {
  return buildEvent(
    'session.expired',
    {
      ...pick(facts),
      expiredAt: isoSeconds(expiry.expiredAtMs),
      expiresAt: isoSeconds(expiry.expiresAtMs),
      lastStatus: expiry.lastStatus,
    },
    nowMs,
  );
}

function pick(facts: SessionFacts): SessionFacts {
  return { sessionId: facts.sessionId, interviewId: facts.interviewId, metadata: facts.metadata };
}

/** The bytes sent and signed. Compact JSON; receivers must verify these bytes, not a re-serialization. */
export function serializeEvent(event: WebhookEvent<object>): string {
  return stringifyJson(event);
}
