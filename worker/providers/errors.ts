import OpenAI from 'openai';
import { PROVIDER_FAILURE_REASONS, type FailureReason } from '../../lib/failure-reasons.ts';

/**
 * Every model-provider failure becomes a ProviderError, and whether it is worth retrying is
 * decided here and nowhere else: timeouts and connection failures are retryable; of the HTTP
 * statuses, 408, 409 (lock contention), 429, 499 and 5xx are, every other 4xx is final.
 * `unavailable`: a streaming endpoint could not be opened (realtime speech-to-text); the caller
 * falls back to the batch endpoint, so its reason is its own (`stt_stream_unavailable`).
 */
export type ProviderKind = 'stt' | 'llm' | 'tts';
export type FailureKind = 'timeout' | 'http' | 'network' | 'bad_response' | 'aborted' | 'unavailable';

export class ProviderError extends Error {
  readonly provider: ProviderKind;
  readonly kind: FailureKind;
  readonly retryable: boolean;
  readonly status?: number;

  constructor(provider: ProviderKind, kind: FailureKind, retryable: boolean, message: string, status?: number) {
    super(message);
    this.provider = provider;
    this.kind = kind;
    this.retryable = retryable;
    this.status = status;
    this.name = 'ProviderError';
  }

  /** The reason code of a failed session's outcome, e.g. `llm_timeout`, `tts_error`. */
  get reason(): FailureReason {
    const reasons = PROVIDER_FAILURE_REASONS[this.provider];
    return this.kind === 'unavailable' ? reasons.unavailable : this.kind === 'timeout' ? reasons.timeout : reasons.error;
  }
}

export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status === 499 || status >= 500;
}

const LABEL: Record<ProviderKind, string> = { stt: 'speech-to-text', llm: 'language model', tts: 'text-to-speech' };

/**
 * `timedOut` says whether our own deadline fired; `cancelled` whether the session itself stopped
 * the call (hang-up, shutdown), which is neither retried nor blamed on the provider.
 */
export function toProviderError(
  provider: ProviderKind,
  err: unknown,
  state: { timedOut: boolean; cancelled: boolean; timeoutMs: number },
): ProviderError {
  if (err instanceof ProviderError) return err;
  const label = LABEL[provider];
  if (state.cancelled) return new ProviderError(provider, 'aborted', false, `The ${label} call was cancelled.`);
  if (state.timedOut || err instanceof OpenAI.APIConnectionTimeoutError) {
    return new ProviderError(provider, 'timeout', true, `The ${label} did not answer within ${state.timeoutMs / 1000} s.`);
  }
  if (err instanceof OpenAI.APIError && typeof err.status === 'number') {
    return new ProviderError(provider, 'http', isRetryableStatus(err.status), `The ${label} answered HTTP ${err.status}.`, err.status);
  }
  if (
    err instanceof OpenAI.APIConnectionError ||
    err instanceof OpenAI.APIUserAbortError ||
    (err as { name?: string })?.name === 'AbortError'
  ) {
    return new ProviderError(provider, 'network', true, `The ${label} could not be reached.`);
  }
  return new ProviderError(provider, 'bad_response', false, `The ${label} gave an unusable answer.`);
}
