import { describe, expect, it } from 'vitest';
import { FairQueue, JobAbortedError, QueueFullError } from './fair-queue.ts';

/** A job that finishes when the test says so, recording the order jobs started in. */
function gate(order: string[], name: string) {
  let open!: () => void;
  const done = new Promise<void>((r) => (open = r));
  return { job: () => (order.push(name), done.then(() => name)), open };
}

describe('FairQueue', () => {
  it('serves sessions round-robin, not in arrival order', async () => {
    const order: string[] = [];
    const q = new FairQueue({ concurrency: 1, capacity: 10 });
    const first = gate(order, 'a0');
    const all = [q.run('a', first.job)];
    // Session a queues three jobs before b and c queue one each.
    for (const name of ['a1', 'a2', 'a3']) all.push(q.run('a', async () => (order.push(name), name)));
    all.push(q.run('b', async () => (order.push('b1'), 'b1')));
    all.push(q.run('c', async () => (order.push('c1'), 'c1')));
    expect(q.waiting).toBe(5);
    first.open();
    await Promise.all(all);
    expect(order).toEqual(['a0', 'a1', 'b1', 'c1', 'a2', 'a3']);
    expect(q.waiting).toBe(0);
    expect(q.running).toBe(0);
  });

  it('refuses a job past capacity at once, and takes jobs again when there is room', async () => {
    const order: string[] = [];
    const depths: number[] = [];
    const q = new FairQueue({ concurrency: 1, capacity: 2, onDepth: (n) => depths.push(n) });
    const running = gate(order, 'r');
    const r = q.run('a', running.job);
    const w1 = q.run('a', async () => 'w1');
    const w2 = q.run('b', async () => 'w2');
    await expect(q.run('c', async () => 'refused')).rejects.toBeInstanceOf(QueueFullError);
    running.open();
    expect(await Promise.all([r, w1, w2])).toEqual(['r', 'w1', 'w2']);
    expect(await q.run('c', async () => 'later')).toBe('later');
    expect(depths).toEqual([1, 2, 1, 0]);
  });

  it('drops a waiting job whose signal aborts, without running it', async () => {
    const order: string[] = [];
    const q = new FairQueue({ concurrency: 1, capacity: 5 });
    const running = gate(order, 'r');
    const r = q.run('a', running.job);
    const controller = new AbortController();
    const dropped = q.run('b', async () => (order.push('dropped'), 'x'), controller.signal);
    controller.abort();
    await expect(dropped).rejects.toBeInstanceOf(JobAbortedError);
    expect(q.waiting).toBe(0);
    running.open();
    await r;
    expect(order).toEqual(['r']);
  });

  it('a job that throws frees its slot for the next', async () => {
    const q = new FairQueue({ concurrency: 1, capacity: 5 });
    const bad = q.run('a', () => {
      throw new Error('boom');
    });
    const good = q.run('b', async () => 'ok');
    await expect(bad).rejects.toThrow('boom');
    expect(await good).toBe('ok');
  });
});
