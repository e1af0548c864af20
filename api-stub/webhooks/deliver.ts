import { SIGNATURE_HEADER, signatureHeader } from '../../lib/signature.ts';
import { unixSeconds } from '../../lib/time.ts';
import { hostOf, type EgressPolicy } from '../outbound/egress-guard.ts';
import { OutboundError } from '../outbound/outbound-error.ts';
import { postJson } from '../outbound/post-json.ts';

/**
 * One delivery attempt: sign the stored bytes now (a fresh `t` and one `v1` per active secret), POST
 * them through the egress guard within the per-attempt timeout, and describe what happened. Never
 * throws for a receiver's fault: every outcome becomes a row of webhook_deliveries.
 */
export const RESPONSE_BODY_LOG_LIMIT = 1024;

export interface AttemptInput {
  url: string;
  rawBody: string;
  secrets: readonly string[];
  nowMs: number;
  timeoutMs: number;
  policy: EgressPolicy;
  ca?: string[];
}

export interface AttemptResult {
  ok: boolean;
  statusCode: number | null;
  durationMs: number;
  /** Short text for the log: the failure (timeout, refused, ...) or null. Never a secret. */
  error: string | null;
  failure: string | null;
  responseBody: string | null;
}

/** Plain http is allowed only for allow-listed hosts (local receivers in tests and dev). */
function httpsRequired(url: string, policy: EgressPolicy): boolean {
  try {
    return !policy.allowHosts.has(hostOf(new URL(url)));
  } catch {
    return true;
  }
}

export async function attemptDelivery(input: AttemptInput): Promise<AttemptResult> {
  const started = performance.now();
  const signal = AbortSignal.timeout(input.timeoutMs);
  const headers = {
    [SIGNATURE_HEADER]: signatureHeader(input.secrets, unixSeconds(input.nowMs), input.rawBody),
    'user-agent': 'service-webhooks/1',
  };
  try {
    const res = await postJson({
      url: input.url,
      body: input.rawBody,
      headers,
      signal,
      httpsOnly: httpsRequired(input.url, input.policy),
      policy: input.policy,
      maxResponseBytes: RESPONSE_BODY_LOG_LIMIT,
      ...(input.ca ? { ca: input.ca } : {}),
    });
    const ok = res.status >= 200 && res.status < 300;
    return {
      ok,
      statusCode: res.status,
      durationMs: res.durationMs,
      failure: null,
      error: ok ? null : `receiver answered ${res.status}`,
      responseBody: res.body + (res.truncated ? '…[truncated]' : ''),
    };
  } catch (err) {
    const durationMs = Math.round(performance.now() - started);
    if (err instanceof OutboundError) {
      const message = err.kind === 'timeout' ? `timed out after ${input.timeoutMs} ms` : err.message;
      return { ok: false, statusCode: null, durationMs, failure: err.kind, error: `${err.kind}: ${message}`, responseBody: null };
    }
    return {
      ok: false,
      statusCode: null,
      durationMs,
      failure: 'network',
      error: 'network: the attempt failed unexpectedly',
      responseBody: null,
    };
  }
}
