/**
 * A work queue keyed by object (namespace/name): a key waits at most once however often it is
 * added, is never processed by two workers at once (re-added while in flight, it runs again after),
 * and failures retry with per-key exponential backoff (client-go's rate-limited workqueue).
 * Fair by lane (the namespace): keys are taken round-robin across the lanes that have keys
 * waiting, so one tenant's thousand pools delay another tenant's pool by at most one turn each.
 */
import { clampDelay } from '../delay.ts';

/** What the workqueue_* metrics count. */
export interface QueueObserver {
  added(): void;
  retried(): void;
  /** Seconds a key waited between being added and handed to a worker. */
  waited(seconds: number): void;
}

export interface QueueOptions {
  baseDelayMs?: number;
  maxDelayMs?: number;
  observer?: QueueObserver;
  /** The lane a key waits in (default: its namespace, the text before the first '/'). */
  laneOf?: (key: string) => string;
}

const namespaceOf = (key: string): string => {
  const slash = key.indexOf('/');
  return slash < 0 ? '' : key.slice(0, slash);
};

export class WorkQueue {
  /** Keys waiting, per lane, and the lanes that have some in the order they take turns. */
  private readonly lanes = new Map<string, string[]>();
  private readonly turns: string[] = [];
  private waiting = 0;
  private readonly laneOf: (key: string) => string;
  private readonly queued = new Set<string>();
  private readonly active = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly failures = new Map<string, number>();
  private readonly waiters: Array<(key: string | undefined) => void> = [];
  private readonly addedAt = new Map<string, number>();
  private readonly startedAt = new Map<string, number>();
  private readonly observer: QueueObserver | undefined;
  private closed = false;
  private readonly base: number;
  private readonly max: number;

  constructor(opts: QueueOptions = {}) {
    this.base = opts.baseDelayMs ?? 100;
    this.max = opts.maxDelayMs ?? 300_000;
    this.observer = opts.observer;
    this.laneOf = opts.laneOf ?? namespaceOf;
  }

  private push(key: string): void {
    const lane = this.laneOf(key);
    const keys = this.lanes.get(lane);
    if (keys) keys.push(key);
    else {
      this.lanes.set(lane, [key]);
      this.turns.push(lane);
    }
    this.waiting++;
  }

  /** The next key of the lane whose turn it is; that lane goes to the back of the line. */
  private shift(): string | undefined {
    const lane = this.turns.shift();
    if (lane === undefined) return undefined;
    const keys = this.lanes.get(lane)!;
    const key = keys.shift()!;
    if (keys.length > 0) this.turns.push(lane);
    else this.lanes.delete(lane);
    this.waiting--;
    return key;
  }

  /** Seconds each key in flight has been processed so far (for the unfinished-work gauges). */
  inFlightSeconds(now = performance.now()): number[] {
    return [...this.startedAt.values()].map((t) => (now - t) / 1000);
  }

  private hand(key: string): string {
    const now = performance.now();
    const added = this.addedAt.get(key);
    this.addedAt.delete(key);
    if (added !== undefined) this.observer?.waited((now - added) / 1000);
    this.active.add(key);
    this.startedAt.set(key, now);
    return key;
  }

  /** Keys waiting (not in flight, not delayed). */
  get depth(): number {
    return this.waiting;
  }

  add(key: string): void {
    if (this.closed) return;
    if (this.active.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.observer?.added();
    this.addedAt.set(key, performance.now());
    const waiter = this.waiters.shift();
    if (waiter) {
      this.queued.delete(key);
      waiter(this.hand(key));
    } else this.push(key);
  }

  /** Adds the key after `ms`; an earlier pending delay for the same key wins. */
  addAfter(key: string, ms: number): void {
    if (this.closed) return;
    // A boundary weeks away is re-checked after the longest timer Node can hold, never after 1 ms.
    ms = clampDelay(ms);
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
    this.observer?.retried();
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
    const key = this.shift();
    if (key !== undefined) {
      this.queued.delete(key);
      return Promise.resolve(this.hand(key));
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Processing of `key` finished; if it was added meanwhile, it goes back in line. */
  done(key: string): void {
    this.active.delete(key);
    this.startedAt.delete(key);
    if (this.dirty.delete(key)) this.add(key);
  }

  shutdown(): void {
    this.closed = true;
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    for (const waiter of this.waiters.splice(0)) waiter(undefined);
  }
}
