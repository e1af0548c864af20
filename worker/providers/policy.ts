import { ProviderError, toProviderError, type ProviderKind } from './errors.ts';

/**
 * Our one retry and timeout policy for model providers (the `openai` client's own retries are
 * off). Each attempt gets its own deadline; `cancel` (the session's signal) stops everything.
 */
export interface CallPolicy {
  timeoutMs: number;
  retries: number;
  backoffMs?: number;
}

export interface Attempt {
  signal: AbortSignal;
  /** Our deadline for this attempt fired. */
  timedOut(): boolean;
}

function attemptSignal(timeoutMs: number, cancel?: AbortSignal): { signal: AbortSignal; timedOut: () => boolean; dispose: () => void } {
  const controller = new AbortController();
  let fired = false;
  const timer = setTimeout(() => {
    fired = true;
    controller.abort(new Error('provider deadline'));
  }, timeoutMs);
  const onCancel = () => controller.abort(new Error('cancelled'));
  cancel?.addEventListener('abort', onCancel, { once: true });
  return {
    signal: controller.signal,
    timedOut: () => fired,
    dispose: () => {
      clearTimeout(timer);
      cancel?.removeEventListener('abort', onCancel);
    },
  };
}

/**
 * Runs `call` under the policy. `call` may keep using the attempt's signal after it resolves (a
 * stream's remainder); `release` must then be called when the stream is done.
 */
export async function callWithPolicy<T>(
  provider: ProviderKind,
  policy: CallPolicy,
  call: (attempt: Attempt) => Promise<T>,
  cancel?: AbortSignal,
): Promise<{ value: T; attempt: Attempt; release: () => void }> {
  let lastError: ProviderError | undefined;
  for (let i = 0; i <= policy.retries; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, (policy.backoffMs ?? 200) * 2 ** (i - 1)));
    if (cancel?.aborted) break;
    const a = attemptSignal(policy.timeoutMs, cancel);
    const attempt: Attempt = { signal: a.signal, timedOut: a.timedOut };
    try {
      const value = await call(attempt);
      return { value, attempt, release: a.dispose };
    } catch (err) {
      a.dispose();
      lastError = toProviderError(provider, err, {
        timedOut: a.timedOut(),
        cancelled: Boolean(cancel?.aborted),
        timeoutMs: policy.timeoutMs,
      });
      if (!lastError.retryable) throw lastError;
    }
  }
  throw lastError ?? toProviderError(provider, new Error('cancelled'), { timedOut: false, cancelled: true, timeoutMs: policy.timeoutMs });
}
