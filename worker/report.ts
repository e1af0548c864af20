import type { Logger } from '../lib/log.ts';
import type { Outcome } from './bot/messages.ts';
import type { WorkerMetrics } from './telemetry/metrics.ts';

/**
 * The outcome report to the service: POST {BACKEND_URL}/api/v2/worker/sessions/{id}/outcome with
 * the shared bearer token (docs/contracts.md). Retried with backoff on connection failures,
 * timeouts, 408, 429 and 5xx; the service treats a repeated report as a no-op.
 */
export interface ReportOptions {
  backendUrl: string;
  token: string;
  timeoutMs: number;
  attempts: number;
  log: Logger;
  metrics?: WorkerMetrics;
  /** First backoff step in ms (doubled per attempt). */
  backoffMs?: number;
}

/** `serviceAttempt` is the spawn body's `attempt`, echoed so the service can tell a late report apart. */
export async function reportOutcome(sessionId: string, outcome: Outcome, options: ReportOptions, serviceAttempt?: number): Promise<boolean> {
  const url = `${options.backendUrl}/api/v2/worker/sessions/${encodeURIComponent(sessionId)}/outcome`;
  const body = JSON.stringify(serviceAttempt === undefined ? outcome : { ...outcome, attempt: serviceAttempt });
  for (let attempt = 1; attempt <= options.attempts; attempt++) {
    let retry = true;
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${options.token}`, 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      await res.arrayBuffer().catch(() => undefined);
      if (res.ok) {
        options.metrics?.reports.inc({ result: 'ok' });
        return true;
      }
      retry = res.status === 408 || res.status === 429 || res.status >= 500;
      options.log.warn('outcome report refused', { sessionId, status: res.status, attempt });
    } catch (err) {
      options.log.warn('outcome report failed', { sessionId, attempt, err });
    }
    if (!retry) break;
    if (attempt < options.attempts) await new Promise((r) => setTimeout(r, (options.backoffMs ?? 500) * 2 ** (attempt - 1)));
  }
  options.metrics?.reports.inc({ result: 'failed' });
  options.log.error('giving up on an outcome report; it stays in the session record', { sessionId });
  return false;
}
