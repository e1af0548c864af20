/**
 * A work queue keyed by object (namespace/name): a key waits at most once however often it is
 * added, is never processed by two workers at once (re-added while in flight, it runs again after),
 * and failures retry with per-key exponential backoff.
 */
export interface QueueOptions {
  baseDelayMs?: number;
  maxDelayMs?: number;
}

export class WorkQueue {
  private readonly ready: string[] = [];
  private readonly queued = new Set<string>();
  private readonly active = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly failures = new Map<string, number>();
  private readonly waiters: Array<(key: string | undefined) => void> = [];
  private closed = false;
  private readonly base: number;
  private readonly max: number;

  constructor(opts: QueueOptions = {}) {
    this.base = opts.baseDelayMs ?? 100;
    this.max = opts.maxDelayMs ?? 300_000;
  }

  /** Keys waiting (not in flight, not delayed). */
  get depth(): number {
    return this.ready.length;
  }

  add(key: string): void {
    if (this.closed) return;
    if (this.active.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    this.queued.add(key);
    const waiter = this.waiters.shift();
    if (waiter) {
      this.queued.delete(key);
      this.active.add(key);
      waiter(key);
    } else this.ready.push(key);
  }

  /** Adds the key after `ms`; an earlier pending delay for the same key wins. */
  addAfter(key: string, ms: number): void {
    if (this.closed) return;
    if (ms <= 0) return this.add(key);
    const at = Date.now() + ms;
    const pending = this.timers.get(key);
    if (pending && pending.at <= at) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, ms);
    timer.unref();
    this.timers.set(key, { at, timer });
  }

  /** Retry after a delay that doubles with each consecutive failure of this key. */
  addRateLimited(key: string): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    const delay = Math.min(this.max, this.base * 2 ** n);
    this.addAfter(key, delay);
    return delay;
  }

  /** The key succeeded: its backoff starts over. */
  forget(key: string): void {
    this.failures.delete(key);
  }

  /** The next key to process, or undefined once the queue is shut down. */
  get(): Promise<string | undefined> {
    if (this.closed) return Promise.resolve(undefined);
    const key = this.ready.shift();
    if (key !== undefined) {
      this.queued.delete(key);
      this.active.add(key);
      return Promise.resolve(key);
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Processing of `key` finished; if it was added meanwhile, it goes back in line. */
  done(key: string): void {
    this.active.delete(key);
    if (this.dirty.delete(key)) this.add(key);
  }

  shutdown(): void {
    this.closed = true;
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    for (const waiter of this.waiters.splice(0)) waiter(undefined);
  }
}
