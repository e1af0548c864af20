/**
 * The events the respondent page sends to the host page (through `postMessage`), shared by the
 * page and the browser SDK so that both sides agree on names and shapes. See docs/respondent-page.md.
 */
export const SERVICE_EVENTS = [
  'service:ready', // the page loaded and knows its session; waiting for the respondent to start
  'service:connecting', // microphone granted, asking the service for a room
  'service:started', // joined the room; the interview runs
  'service:speaking', // the interviewer (bot) is speaking
  'service:listening', // the interviewer waits for the respondent's answer
  'service:thinking', // the respondent finished a turn; the interviewer prepares its next line
  'service:completed', // the interview ended normally
  'service:failed', // the interview ended because the voice pipeline failed or timed out
  'service:error', // a step failed (microphone, connect, room); `retryable` says whether Retry shows
] as const;

export type ServiceEventName = (typeof SERVICE_EVENTS)[number];

/** Marks our messages among everything else a host page may receive. */
export const MESSAGE_SOURCE = 'service-respondent';

export interface ServiceEvent {
  source: typeof MESSAGE_SOURCE;
  type: ServiceEventName;
  sessionId: string;
  /** Milliseconds since the page's time origin, for latency measurements by the host. */
  at: number;
  /** On service:error: a stable code (e.g. `microphone_denied`, `worker_unreachable`). */
  code?: string;
  message?: string;
  retryable?: boolean;
  /** On service:failed: the room's end reason (`failed`, `timeout`); the page then offers Try again. */
  reason?: string;
}

/** Commands the host page may send to the respondent page. */
export const HOST_COMMANDS = ['service:hangup'] as const;
export type HostCommandName = (typeof HOST_COMMANDS)[number];

export interface HostCommand {
  source: 'service-host';
  type: HostCommandName;
}

export function isServiceEvent(data: unknown): data is ServiceEvent {
  if (typeof data !== 'object' || data === null) return false;
  const d = data as Record<string, unknown>;
  return (
    d.source === MESSAGE_SOURCE &&
    typeof d.type === 'string' &&
    (SERVICE_EVENTS as readonly string[]).includes(d.type) &&
    typeof d.sessionId === 'string'
  );
}

export function isHostCommand(data: unknown): data is HostCommand {
  if (typeof data !== 'object' || data === null) return false;
  const d = data as Record<string, unknown>;
  return d.source === 'service-host' && typeof d.type === 'string' && (HOST_COMMANDS as readonly string[]).includes(d.type);
}

/** The query parameter by which the SDK tells the page which origin embeds it. */
export const PARENT_ORIGIN_PARAM = 'parentOrigin';

/** An origin string (`scheme://host[:port]`) or null when the value is not a plain http(s) origin. */
export function normaliseOrigin(value: string | null | undefined): string | null {
  if (!value) return null;
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    if (url.origin !== value.replace(/\/$/, '')) return null;
    return url.origin;
  } catch {
    return null;
  }
}
