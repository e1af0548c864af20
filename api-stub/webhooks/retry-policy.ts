/**
 * Delivery retries as data. The spec's current behaviour is no retries: a failed attempt drops the
 * event. An endpoint may opt in (retries_enabled); then the schedule below applies, one delay per
 * retry, each stretched or shrunk by random jitter so that many failed deliveries do not return in
 * lock-step. A schedule's length is the number of retries after the first attempt.
 */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [5_000, 30_000, 2 * 60_000, 10 * 60_000, 60 * 60_000, 5 * 60 * 60_000];

/** Jitter as a fraction: a delay d becomes a uniform value in [d * (1 - j), d * (1 + j)]. */
export const DEFAULT_JITTER = 0.2;

/** Parses e.g. "5s,30s,2m,10m,1h" or "100,200" (milliseconds). */
export function parseRetrySchedule(raw: string | undefined, variable = 'WEBHOOK_RETRY_SCHEDULE'): readonly number[] {
  if (raw === undefined || raw.trim() === '') return DEFAULT_RETRY_SCHEDULE_MS;
  const units: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
  return Object.freeze(
    raw.split(',').map((part) => {
      const match = /^\s*(\d+)\s*(ms|s|m|h)?\s*$/.exec(part);
      if (!match) throw new Error(`${variable}: expected a comma list of delays such as "5s,30s,2m", got ${JSON.stringify(raw)}`);
      const ms = Number(match[1]) * units[match[2] ?? 'ms']!;
      if (ms < 1 || ms > 7 * 86_400_000) throw new Error(`${variable}: each delay must be from 1 ms to 7 days`);
      return ms;
    }),
  );
}

/** What one attempt ended with, as the policy sees it. */
export interface AttemptOutcome {
  statusCode: number | null;
  /** Failure kind when there was no HTTP answer (see OutboundFailure). */
  failure: string | null;
}

/**
 * Worth another try: no answer (timeout, refused, network, TLS, DNS, a refused address that may
 * change), 408, 429 and 5xx. Other 4xx mean the receiver rejected these bytes and the same bytes
 * will not fare better; a malformed URL or a non-https URL is a configuration error.
 */
export function isRetryable(outcome: AttemptOutcome): boolean {
  if (outcome.statusCode === null) return outcome.failure !== 'invalid_url' && outcome.failure !== 'https_required';
  const s = outcome.statusCode;
  return s === 408 || s === 429 || s >= 500;
}

/** Delay before attempt number `nextAttempt` (2 = the first retry), or null when the schedule is spent. */
export function retryDelay(
  nextAttempt: number,
  schedule: readonly number[],
  random: () => number = Math.random,
  jitter = DEFAULT_JITTER,
): number | null {
  const base = schedule[nextAttempt - 2];
  if (base === undefined) return null;
  return Math.max(1, Math.round(base * (1 - jitter + 2 * jitter * random())));
}
