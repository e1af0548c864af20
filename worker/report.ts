import type { Logger } from '../lib/log.ts';
import type { Outcome } from './bot/messages.ts';
import type { WorkerMetrics } from './telemetry/metrics.ts';

/**
 * The outcome report to the service: POST {BACKEND_URL}/api/v2/worker/sessions/{id}/outcome with
 * the session's report token (contract C1; the worker token when the spawn carried none). The
 * service treats a repeated report as a no-op. Durable retries live in outbox.ts; `reportOutcome`
 * is the in-process fallback for when Redis cannot even take the report.
 */
export interface ReportOptions {
  backendUrl: string;
  /** The worker token: the bearer of reports whose spawn carried no reportToken. */
  token: string;
  timeoutMs: number;
  attempts: number;
  log: Logger;
  metrics?: WorkerMetrics;
  /** First backoff step in ms (doubled per attempt). */
  backoffMs?: number;
}

export interface OutcomeReport {
  sessionId: string;
  outcome: Outcome;
  /** The service's connect attempt from the spawn body, echoed (as `attempt`) so the service can tell a late report apart. */
  serviceAttempt?: number;
  /** The spawn's reportToken; null: report with the worker token. */
  reportToken: string | null;
}

/** One delivery try: `ok`, `retry` (the service may take it later) or `refused` (it never will). */
export type DeliveryResult = 'ok' | 'retry' | 'refused';

export async function deliverOnce(
  report: OutcomeReport,
  options: Pick<ReportOptions, 'backendUrl' | 'token' | 'timeoutMs' | 'log'>,
): Promise<DeliveryResult> {
  const url = `${options.backendUrl}/api/v2/worker/sessions/${encodeURIComponent(report.sessionId)}/outcome`;
  // `attempt` is the contract's name for the service's connect attempt (docs/contracts.md).
  const body = JSON.stringify(report.serviceAttempt === undefined ? report.outcome : { ...report.outcome, attempt: report.serviceAttempt });
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${report.reportToken ?? options.token}`, 'content-type': 'application/json' },
      body,
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    await res.arrayBuffer().catch(() => undefined);
    if (res.ok) return 'ok';
    options.log.warn('outcome report refused', { sessionId: report.sessionId, status: res.status });
    return res.status === 408 || res.status === 429 || res.status >= 500 ? 'retry' : 'refused';
  } catch (err) {
    options.log.warn('outcome report failed', { sessionId: report.sessionId, err });
    return 'retry';
  }
}

/** Reports with a few in-process retries; true once the service took it. */
export async function reportOutcome(report: OutcomeReport, options: ReportOptions): Promise<boolean> {
  for (let attempt = 1; attempt <= options.attempts; attempt++) {
    const result = await deliverOnce(report, options);
    if (result === 'ok') {
      options.metrics?.reports.inc({ result: 'ok' });
      return true;
    }
    if (result === 'refused') break;
    if (attempt < options.attempts) await new Promise((r) => setTimeout(r, (options.backoffMs ?? 500) * 2 ** (attempt - 1)));
  }
  options.metrics?.reports.inc({ result: 'failed' });
  options.log.error('giving up on an outcome report that Redis could not keep', { sessionId: report.sessionId });
  return false;
}
