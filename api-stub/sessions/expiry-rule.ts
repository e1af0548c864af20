import type { SessionStatus } from './state-machine.ts';

/**
 * When a session expires (docs/session-states.md, contract C5). Pure. An interview that started
 * before `expiresAt` may finish: a session that never started expires at `expiresAt`, but a
 * STARTED one only at `expiresAt + grace` if no completed report came by then. A new connect after
 * `expiresAt` is refused either way (api-stub/connect/connect.ts), so the grace only lets the
 * interview already under way report its outcome.
 */
export const STARTED_SESSION_GRACE_DEFAULT_SECONDS = 86_400;

/** Statuses that expire at `expiresAt` itself. */
export const EXPIRE_AT_EXPIRES_AT: readonly SessionStatus[] = ['PENDING', 'SENT', 'CLICKED'];

/** The instant (Unix ms) a session in `status` expires, or null when it never does (terminal). */
export function expiryInstant(status: SessionStatus, expiresAtMs: number, startedGraceMs: number): number | null {
  if (status === 'STARTED') return expiresAtMs + startedGraceMs;
  return EXPIRE_AT_EXPIRES_AT.includes(status) ? expiresAtMs : null;
}

export function isExpiryDue(status: SessionStatus, expiresAtMs: number, nowMs: number, startedGraceMs: number): boolean {
  const at = expiryInstant(status, expiresAtMs, startedGraceMs);
  return at !== null && at <= nowMs;
}
