import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../lib/log.ts';
import { runWorkers, type Failure, type Result, type WorkerOptions } from './controller.ts';
import { createRuntimeMetrics } from './metrics.ts';
import { WorkQueue } from './queue.ts';

/** A controller over `reconcile`, with a queue fast enough to retry within a test. */
function harness(reconcile: WorkerOptions['reconcile'], extra: Partial<WorkerOptions> = {}) {
  const registry = new Registry();
  const metrics = createRuntimeMetrics(registry);
  const queue = new WorkQueue({ baseDelayMs: 10, maxDelayMs: 40 });
  const stopped = new AbortController();
  const failures: Array<{ key: string; failure: Failure }> = [];
  const running = runWorkers({
    name: 'test',
    queue,
    reconcile,
    workers: 2,
    timeoutMs: 5000,
    metrics,
    log: silentLogger,
    stopped: stopped.signal,
    synced: Promise.resolve(),
    onFailure: async (key, failure) => void failures.push({ key, failure }),
    ...extra,
  });
  const stop = async () => {
    stopped.abort();
    queue.shutdown();
    await running;
  };
  const value = async (name: string, labels = 'controller="test"') => {
    const text = await registry.metrics();
    return Number(new RegExp(`^${name}\\{${labels}\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  };
  return { queue, failures, stop, value };
}

const until = async (check: () => boolean, what: string) => {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!check()) throw new Error(`timed out waiting for ${what}`);
};

describe('runWorkers (the reconcileHandler)', () => {
  it('retries an error with backoff until it succeeds, then forgets the key', async () => {
    const calls: number[] = [];
    const h = harness(async () => {
      calls.push(performance.now());
      return calls.length < 4 ? { result: 'error', error: new Error('not yet') } : { result: 'done' };
    });
    h.queue.add('ns/a');
    await until(() => calls.length === 4, 'four passes');
    // Three failures: 10, 20, 40 ms apart at least (the backoff doubles, capped at 40).
    const gaps = calls.slice(1).map((t, i) => t - calls[i]!);
    expect(gaps[0]).toBeGreaterThanOrEqual(9);
    expect(gaps[1]).toBeGreaterThanOrEqual(19);
    expect(gaps[2]).toBeGreaterThanOrEqual(39);
    // Forgotten on success: the next failure starts the backoff over.
    expect(h.queue.addRateLimited('ns/a')).toBe(10);
    expect(await h.value('controller_runtime_reconcile_errors_total')).toBe(3);
    expect(await h.value('controller_runtime_reconcile_total', 'controller="test",result="success"')).toBe(1);
    await h.stop();
  });

  it('requeues after the delay a result asks for, and counts a blocked result as a terminal error without retrying it', async () => {
    const seen: string[] = [];
    const h = harness(async (key): Promise<Result> => {
      seen.push(key);
      if (key === 'ns/later' && seen.filter((k) => k === key).length === 1) return { result: 'requeue', afterMs: 30 };
      if (key === 'ns/blocked') return { result: 'done', blocked: 'InvalidSpec' };
      return { result: 'done' };
    });
    h.queue.add('ns/later');
    h.queue.add('ns/blocked');
    await until(() => seen.filter((k) => k === 'ns/later').length === 2, 'the requeue');
    await new Promise((r) => setTimeout(r, 100));
    expect(seen.filter((k) => k === 'ns/blocked')).toHaveLength(1);
    expect(await h.value('controller_runtime_terminal_reconcile_errors_total')).toBe(1);
    expect(await h.value('controller_runtime_reconcile_total', 'controller="test",result="requeue_after"')).toBe(1);
    await h.stop();
  });

  it('contains a throw (a panic) to its key: reported, retried with backoff, and the other keys go on', async () => {
    let boom = 0;
    const done: string[] = [];
    // Not async: the first throw escapes before any promise exists.
    const h = harness((key) => {
      if (key === 'a/bad' && boom++ < 2) throw new RangeError('Maximum call stack size exceeded');
      done.push(key);
      return Promise.resolve({ result: 'done' });
    });
    h.queue.add('a/bad');
    h.queue.add('b/good');
    await until(() => done.includes('a/bad') && done.includes('b/good'), 'both keys done');
    expect(h.failures.map((f) => [f.key, f.failure.kind, f.failure.error.message])).toEqual([
      ['a/bad', 'panic', 'Maximum call stack size exceeded'],
      ['a/bad', 'panic', 'Maximum call stack size exceeded'],
    ]);
    expect(await h.value('controller_runtime_reconcile_panics_total')).toBe(2);
    await h.stop();
  });

  it('cuts a reconcile off at its deadline: its signal aborts, the key is reported and retried, the worker is free', async () => {
    let aborted: unknown;
    let passes = 0;
    const h = harness(
      (key, signal) => {
        passes++;
        if (key === 'ns/quick' || passes > 2) return Promise.resolve({ result: 'done' });
        return new Promise<Result>((resolve) =>
          signal.addEventListener('abort', () => {
            aborted = signal.reason;
            resolve({ result: 'error', error: new Error('aborted') });
          }),
        );
      },
      { workers: 1, timeoutMs: 50 },
    );
    h.queue.add('ns/slow');
    h.queue.add('ns/quick');
    await until(() => h.failures.length === 1 && passes >= 3, 'the timeout reported and the queue moving');
    expect(h.failures[0]).toMatchObject({ key: 'ns/slow', failure: { kind: 'timeout' } });
    expect((aborted as Error).name).toBe('ReconcileTimeoutError');
    expect(await h.value('voice_operator_reconcile_timeouts_total')).toBe(1);
    await h.stop();
  });

  it('runs nothing before the caches are synced', async () => {
    let release!: () => void;
    const synced = new Promise<void>((r) => (release = r));
    const seen: string[] = [];
    const h = harness(
      async (key) => {
        seen.push(key);
        return { result: 'done' };
      },
      { synced },
    );
    h.queue.add('ns/a');
    await new Promise((r) => setTimeout(r, 50));
    expect(seen).toEqual([]);
    release();
    await until(() => seen.length === 1, 'the first pass');
    await h.stop();
  });
});
