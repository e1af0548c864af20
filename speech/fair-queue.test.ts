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
    const dropped = q.run('b', async () => (order.push('dropped'), 'x'), { signal: controller.signal });
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

  it('runs background jobs only when no ordinary job waits, and promote() moves a session up in order', async () => {
    const order: string[] = [];
    const q = new FairQueue({ concurrency: 1, capacity: 10 });
    const first = gate(order, 'r');
    const all = [q.run('x', first.job)];
    const job = (name: string) => async () => (order.push(name), name);
    all.push(q.run('a', job('a-piece1'), { background: true }), q.run('a', job('a-piece2'), { background: true }));
    all.push(q.run('b', job('b-piece1'), { background: true }));
    all.push(q.run('c', job('c-commit')));
    // Session b commits: its piece is what it now waits for, ahead of a's pieces, before its own tail.
    q.promote('b');
    all.push(q.run('b', job('b-tail')));
    expect(q.waiting).toBe(5);
    first.open();
    await Promise.all(all);
    expect(order).toEqual(['r', 'c-commit', 'b-piece1', 'b-tail', 'a-piece1', 'a-piece2']);
  });

  it('counts every waiting job against the capacity: background pieces, promoted pieces and tails alike', async () => {
    const order: string[] = [];
    const q = new FairQueue({ concurrency: 1, capacity: 2 });
    const running = gate(order, 'r');
    const all = [
      q.run('a', running.job),
      q.run('a', async () => 'p1', { background: true }),
      q.run('b', async () => 'p2', { background: true }),
    ];
    await expect(q.run('c', async () => 'p3', { background: true })).rejects.toBeInstanceOf(QueueFullError);
    // Session a commits: its piece is promoted and its tail queued; the tail is counted like any job,
    // and makes room by pushing out b's background piece (b decodes it at its own commit).
    q.promote('a');
    const tail = q.run('a', async () => 'a-tail');
    await expect(all[2]).rejects.toBeInstanceOf(QueueFullError);
    expect(q.waiting).toBe(2);
    // Full of ordinary jobs of one client: the same client's next job is refused.
    await expect(q.run('a', async () => 'a-more')).rejects.toBeInstanceOf(QueueFullError);
    running.open();
    expect(await Promise.all([all[0], all[1], tail])).toEqual(['r', 'p1', 'a-tail']);
    expect(q.waiting).toBe(0);
  });

  it('is fair between clients, not their sessions: a client on many connections is one turn of the round', async () => {
    const order: string[] = [];
    const q = new FairQueue({ concurrency: 1, capacity: 10 });
    const first = gate(order, 'r');
    const all = [q.run('x', first.job, { client: 'busy' })];
    const job = (name: string) => async () => (order.push(name), name);
    for (const conn of ['c1', 'c2', 'c3', 'c4']) all.push(q.run(conn, job(`busy-${conn}`), { client: 'busy' }));
    all.push(q.run('d1', job('other'), { client: 'other' }));
    first.open();
    await Promise.all(all);
    // Per connection, "other" would come fifth; per client it is next, and busy's connections take turns.
    expect(order).toEqual(['r', 'busy-c1', 'other', 'busy-c2', 'busy-c3', 'busy-c4']);
  });

  it("a client that fills the queue gives way: another client's job pushes out its newest one", async () => {
    const order: string[] = [];
    const q = new FairQueue({ concurrency: 1, capacity: 3 });
    const running = gate(order, 'r');
    const busy = [
      q.run('c0', running.job, { client: 'busy' }),
      ...['c1', 'c2', 'c3'].map((c) => q.run(c, async () => c, { client: 'busy' })),
    ];
    expect(q.hasRoom('busy')).toBe(false);
    expect(q.hasRoom('other')).toBe(true);
    const other = q.run('d1', async () => 'other', { client: 'other' });
    await expect(busy[3]).rejects.toBeInstanceOf(QueueFullError);
    expect(q.waiting).toBe(3);
    // busy holds two waiting jobs against a third client's none: one more is pushed out for it.
    const third = q.run('e1', async () => 'third', { client: 'third' });
    await expect(busy[2]).rejects.toBeInstanceOf(QueueFullError);
    // Now one each: nobody holds two more than a fourth client, so the fourth is refused.
    expect(q.hasRoom('fourth')).toBe(false);
    await expect(q.run('f1', async () => 'fourth', { client: 'fourth' })).rejects.toBeInstanceOf(QueueFullError);
    running.open();
    expect(await Promise.all([busy[0], busy[1], other, third])).toEqual(['r', 'c1', 'other', 'third']);
  });
});
