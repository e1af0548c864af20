/**
 * The worker loop of a controller, as controller-runtime's reconcileHandler: take a key from the
 * queue, reconcile it under a deadline, then forget it (success), requeue it after a delay, or
 * retry it with backoff (error). A reconcile that throws or overruns its deadline fails only its
 * own key: it is counted, reported through `onFailure`, and retried with backoff like any error.
 */
import type { Logger } from '../../lib/log.ts';
import type { RuntimeMetrics } from './metrics.ts';
import type { WorkQueue } from './queue.ts';

/** `blocked` names why an object cannot be satisfied: a terminal error, counted as one, not retried. */
export type Result =
  { result: 'done'; blocked?: string } | { result: 'requeue'; afterMs: number; blocked?: string } | { result: 'error'; error: Error };

/** What went wrong beyond an ordinary error result: a throw (a panic) or the deadline passing. */
export interface Failure {
  kind: 'panic' | 'timeout';
  error: Error;
}

export interface WorkerOptions {
  /** The controller's name, the `controller` and `name` label of its metrics. */
  name: string;
  queue: WorkQueue;
  /** One pass over one key. `signal` aborts when the deadline passes or the controller stops. */
  reconcile: (key: string, signal: AbortSignal) => Promise<Result>;
  workers: number;
  /** The deadline of one reconcile. */
  timeoutMs: number;
  metrics: RuntimeMetrics;
  log: Logger;
  /** Aborts when the controller stops: results of reconciles under way no longer count. */
  stopped: AbortSignal;
  /** Resolves when the caches are full; no reconcile runs before. */
  synced: Promise<unknown>;
  /** Told of a panic or timeout of a key (e.g. to mark the object); must not throw. */
  onFailure?: (key: string, failure: Failure) => Promise<void>;
  /** Counts every reconcile that finished (successfully or not). */
  onReconciled?: () => void;
}

/** The deadline of one reconcile unless configured (RECONCILE_TIMEOUT_SECONDS); controller-runtime has none by default. */
export const DEFAULT_RECONCILE_TIMEOUT_MS = 60_000;

export class ReconcileTimeoutError extends Error {
  constructor(ms: number) {
    super(`the reconcile did not finish within ${ms / 1000} s`);
    this.name = 'ReconcileTimeoutError';
  }
}

/** Runs one reconcile under its deadline; a throw or an overrun becomes an error result with its failure. */
async function reconcileBounded(o: WorkerOptions, key: string): Promise<{ outcome: Result; failure?: Failure }> {
  const scope = new AbortController();
  const stop = () => scope.abort();
  o.stopped.addEventListener('abort', stop, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<Failure>((resolve) => {
    timer = setTimeout(() => {
      const error = new ReconcileTimeoutError(o.timeoutMs);
      scope.abort(error); // its API calls end now: nothing it does after its deadline reaches the API server
      resolve({ kind: 'timeout', error });
    }, o.timeoutMs);
  });
  try {
    let started: Promise<Result>;
    try {
      started = o.reconcile(key, scope.signal);
    } catch (err) {
      started = Promise.reject(err); // a reconcile that throws before its first await is contained too
    }
    const run = started.then(
      (outcome) => ({ outcome }),
      (err: unknown) => {
        const error = err instanceof Error ? err : new Error(String(err));
        return { outcome: { result: 'error', error } as Result, failure: { kind: 'panic', error } as Failure };
      },
    );
    const first = await Promise.race([run, deadline]);
    if ('outcome' in first) return first;
    return { outcome: { result: 'error', error: first.error }, failure: first };
  } finally {
    clearTimeout(timer);
    o.stopped.removeEventListener('abort', stop);
  }
}

/** Starts `workers` loops; resolves when all have ended (after queue.shutdown()). */
export async function runWorkers(o: WorkerOptions): Promise<void> {
  const { queue, metrics } = o;
  const name = { name: o.name };
  const controller = { controller: o.name };
  metrics.maxConcurrent.set(controller, o.workers);
  const worker = async () => {
    await o.synced;
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      metrics.queueDepth.set(name, queue.depth);
      metrics.activeWorkers.inc(controller);
      const endReconcile = metrics.reconcileTime.startTimer(controller);
      const endWork = metrics.workDuration.startTimer(name);
      const { outcome, failure } = await reconcileBounded(o, key);
      endReconcile();
      endWork();
      metrics.activeWorkers.dec(controller);
      o.onReconciled?.();
      if (o.stopped.aborted) {
        queue.done(key); // the controller stopped under this reconcile: its result no longer counts
        return;
      }
      if (outcome.result === 'error') {
        metrics.reconcileTotal.inc({ ...controller, result: 'error' });
        metrics.reconcileErrors.inc(controller);
        if (failure?.kind === 'panic') metrics.reconcilePanics.inc(controller);
        if (failure?.kind === 'timeout') metrics.reconcileTimeouts.inc(controller);
        const delay = queue.addRateLimited(key);
        o.log.warn(failure ? `reconcile ${failure.kind === 'panic' ? 'threw' : 'timed out'}; retrying` : 'reconcile failed; retrying', {
          key,
          retryInMs: delay,
          error: outcome.error,
        });
        if (failure && o.onFailure)
          await o.onFailure(key, failure).catch((err: unknown) => o.log.warn('could not report a failed reconcile', { key, error: err }));
      } else {
        queue.forget(key);
        if (outcome.blocked) {
          metrics.reconcileTotal.inc({ ...controller, result: 'error' });
          metrics.reconcileErrors.inc(controller);
          metrics.terminalErrors.inc(controller);
        } else metrics.reconcileTotal.inc({ ...controller, result: outcome.result === 'requeue' ? 'requeue_after' : 'success' });
        if (outcome.result === 'requeue') queue.addAfter(key, outcome.afterMs);
      }
      queue.done(key);
      metrics.queueDepth.set(name, queue.depth);
    }
  };
  const unfinished = setInterval(() => {
    const running = queue.inFlightSeconds();
    metrics.unfinishedWork.set(
      name,
      running.reduce((a, b) => a + b, 0),
    );
    metrics.longestRunning.set(name, Math.max(0, ...running));
  }, 1000);
  unfinished.unref();
  try {
    await Promise.all(Array.from({ length: o.workers }, worker));
  } finally {
    clearInterval(unfinished);
  }
}
