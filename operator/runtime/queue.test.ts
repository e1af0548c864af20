import { describe, expect, it } from 'vitest';
import { clampDelay, MAX_TIMER_MS } from '../delay.ts';
import { WorkQueue } from './queue.ts';

describe('WorkQueue', () => {
  it('keeps one entry per key however often it is added', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.add('b');
    q.add('a');
    expect(q.depth).toBe(2);
    expect(await q.get()).toBe('a');
    expect(await q.get()).toBe('b');
  });

  it('never hands out a key in flight; a key added meanwhile runs again after done', async () => {
    const q = new WorkQueue();
    q.add('a');
    const key = await q.get();
    q.add('a');
    expect(q.depth).toBe(0);
    q.done(key!);
    expect(q.depth).toBe(1);
    expect(await q.get()).toBe('a');
  });

  it('backs off exponentially per key and starts over after forget', () => {
    const q = new WorkQueue({ baseDelayMs: 100, maxDelayMs: 1000 });
    expect([q.addRateLimited('a'), q.addRateLimited('a'), q.addRateLimited('a'), q.addRateLimited('a'), q.addRateLimited('a')]).toEqual([
      100, 200, 400, 800, 1000,
    ]);
    expect(q.addRateLimited('b')).toBe(100);
    q.forget('a');
    expect(q.addRateLimited('a')).toBe(100);
    q.shutdown();
  });

  it('delivers a delayed key after its delay, keeping the earliest of two delays', async () => {
    const q = new WorkQueue();
    const started = Date.now();
    // Far apart, so that a loaded machine cannot blur which delay won.
    q.addAfter('a', 5000);
    q.addAfter('a', 50);
    expect(await q.get()).toBe('a');
    expect(Date.now() - started).toBeLessThan(2500);
    q.shutdown();
  });

  it('wakes waiting workers with undefined on shutdown', async () => {
    const q = new WorkQueue();
    const waiting = q.get();
    q.shutdown();
    expect(await waiting).toBeUndefined();
  });
});

describe('delays beyond what a Node timer holds', () => {
  it('do not fire at once: a window 30 days out waits (clamped to the longest timer)', async () => {
    const q = new WorkQueue();
    q.addAfter('far', 30 * 86_400_000);
    const got = await Promise.race([q.get(), new Promise<string>((r) => setTimeout(() => r('nothing yet'), 200))]);
    expect(got).toBe('nothing yet');
    q.shutdown();
  });

  it('clampDelay keeps every delay finite and within 2^31-1 ms', () => {
    expect(clampDelay(30 * 86_400_000)).toBe(MAX_TIMER_MS);
    expect(clampDelay(-5)).toBe(0);
    expect(clampDelay(Number.NaN)).toBe(0);
    expect(clampDelay(Number.POSITIVE_INFINITY)).toBe(MAX_TIMER_MS);
    expect(clampDelay(1500)).toBe(1500);
  });
});

describe('fairness across namespaces', () => {
  it('takes keys round-robin by namespace, so one namespace with many keys cannot starve another', async () => {
    const q = new WorkQueue();
    for (let i = 0; i < 100; i++) q.add(`tenant-a/pool-${i}`);
    q.add('tenant-b/only');
    q.add('tenant-c/one');
    q.add('tenant-c/two');
    const order = [];
    for (let i = 0; i < 7; i++) order.push(await q.get());
    expect(order).toEqual([
      'tenant-a/pool-0',
      'tenant-b/only',
      'tenant-c/one',
      'tenant-a/pool-1',
      'tenant-c/two',
      'tenant-a/pool-2',
      'tenant-a/pool-3',
    ]);
    expect(q.depth).toBe(96);
  });

  it('gives a namespace that comes back later its turn at once, not behind the waiting backlog', async () => {
    const q = new WorkQueue();
    for (let i = 0; i < 50; i++) q.add(`busy/p${i}`);
    expect(await q.get()).toBe('busy/p0');
    q.add('quiet/p');
    expect(await q.get()).toBe('busy/p1');
    expect(await q.get()).toBe('quiet/p');
  });
});
