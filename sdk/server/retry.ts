import { ConnectionError, ServiceError } from './errors.ts';

/**
 * When the SDK retries, decided in one place. Every POST carries an Idempotency-Key, so a retried
 * session creation returns the first session instead of making a second one; that is what makes
 * retrying a POST safe at all.
 */
export interface RetryPolicy {
  maxRetries: number;
  initialDelayMs: number;
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited for: the error is raised at once. */
  maxRetryAfterSeconds: number;
}

export function shouldRetry(error: unknown, attempt: number, policy: RetryPolicy): boolean {
  if (attempt >= policy.maxRetries) return false;
  // No answer at all: the request may or may not have arrived; the idempotency key covers both.
  if (error instanceof ConnectionError) return true;
  if (!(error instanceof ServiceError)) return false;
  // Rate capped: retry after the server's hint, unless the hint is longer than we will wait.
  if (error.status === 429) return error.retryAfterSeconds === null || error.retryAfterSeconds <= policy.maxRetryAfterSeconds;
  // A fault on the service side (spec section 7: retry with exponential backoff), or a gateway's.
  if (error.status === 500 || error.status === 502 || error.status === 503 || error.status === 504) return true;
  // Everything else (400, 401, 403, 404, 409, 410) would fail the same way again.
  return false;
}

/**
 * Delay before retry number `attempt` (0-based): doubling from initialDelayMs up to maxDelayMs, with
 * "equal jitter" (half fixed, half random) so that many clients do not retry in step. A server's
 * Retry-After is a floor.
 */
export function retryDelayMs(
  attempt: number,
  policy: RetryPolicy,
  retryAfterSeconds: number | null,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** attempt);
  const jittered = ceiling / 2 + random() * (ceiling / 2);
  return Math.max(jittered, (retryAfterSeconds ?? 0) * 1000);
}
