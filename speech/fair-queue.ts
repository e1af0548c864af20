/**
 * A bounded job queue that is fair between sessions: jobs run `concurrency` at a time, and the
 * next one is taken round-robin over the sessions that have jobs waiting, so a session with many
 * commits queued cannot starve one with a single commit. At most `capacity` jobs wait (running
 * ones do not count); one more is refused at once with QueueFullError, which the server answers as
 * 503 with Retry-After. A job whose signal aborts while it waits is dropped without running.
 *
 * Two tiers: `background` jobs (pieces of a realtime buffer decoded ahead of its commit) run only
 * when no ordinary job waits, so work someone is waiting for goes first; `promote(session)` moves a
 * session's background jobs up when that session commits and starts waiting for them. Background
 * jobs are refused when `capacity` jobs of either tier wait; ordinary jobs only count ordinary jobs
 * that were queued as such, so decoding ahead never makes a commit or an upload fail. A job that
 * finishes work already taken in (`admitted`: the tail of a buffer whose pieces were queued) is never
 * refused and, like a promoted one, not counted: capacity counts transcriptions, not their pieces.
 */
export class QueueFullError extends Error {
  constructor() {
    super('queue full');
    this.name = 'QueueFullError';
  }
}

export class JobAbortedError extends Error {
  constructor() {
    super('the job was cancelled before it ran');
    this.name = 'JobAbortedError';
  }
}

interface Waiting {
  start: () => void;
  cancel: () => void;
  /** Counts against the capacity of ordinary jobs. */
  counted: boolean;
}

export interface RunOptions {
  /** Aborting it drops the job if it has not started. */
  signal?: AbortSignal;
  /** Run only when no ordinary job waits (see promote). */
  background?: boolean;
  /** Part of work already taken in: never refused, not counted. */
  admitted?: boolean;
}

type Tier = Map<string, Waiting[]>;

export interface FairQueueOptions {
  concurrency: number;
  capacity: number;
  /** Called whenever the number of waiting jobs changes (a metric). */
  onDepth?: (waiting: number) => void;
}

export class FairQueue {
  private readonly options: FairQueueOptions;
  /** Waiting jobs per session and tier; a Map's order is the round-robin order (a served session moves to the back). */
  private readonly foreground: Tier = new Map();
  private readonly background: Tier = new Map();
  private waitingCount = 0;
  private foregroundCount = 0;
  private runningCount = 0;

  constructor(options: FairQueueOptions) {
    this.options = options;
  }

  get waiting(): number {
    return this.waitingCount;
  }

  get running(): number {
    return this.runningCount;
  }

  run<T>(session: string, job: () => Promise<T>, options: RunOptions = {}): Promise<T> {
    const { signal, background = false, admitted = false } = options;
    if (signal?.aborted) return Promise.reject(new JobAbortedError());
    if (this.runningCount < this.options.concurrency && this.waitingCount === 0) return this.execute(job);
    if (!admitted && (background ? this.waitingCount : this.foregroundCount) >= this.options.capacity) return Promise.reject(new QueueFullError());
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => entry.cancel();
      const entry: Waiting = {
        counted: !background && !admitted,
        start: () => {
          signal?.removeEventListener('abort', onAbort);
          this.execute(job).then(resolve, reject);
        },
        cancel: () => {
          if (!this.remove(this.foreground, session, entry) && !this.remove(this.background, session, entry)) return;
          reject(new JobAbortedError());
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.enqueue(background ? this.background : this.foreground, session, [entry]);
    });
  }

  /** The session's waiting background jobs become ordinary ones, after its ordinary jobs, in their order. */
  promote(session: string): void {
    const list = this.background.get(session);
    if (!list) return;
    this.background.delete(session);
    this.setWaiting(this.waitingCount - list.length);
    for (const entry of list) entry.counted = false;
    this.enqueue(this.foreground, session, list);
  }

  private enqueue(tier: Tier, session: string, entries: Waiting[]): void {
    const list = tier.get(session);
    if (list) list.push(...entries);
    else tier.set(session, entries);
    this.foregroundCount += entries.filter((e) => e.counted).length;
    this.setWaiting(this.waitingCount + entries.length);
  }

  private remove(tier: Tier, session: string, entry: Waiting): boolean {
    const list = tier.get(session);
    const index = list?.indexOf(entry) ?? -1;
    if (!list || index < 0) return false;
    list.splice(index, 1);
    if (list.length === 0) tier.delete(session);
    if (entry.counted) this.foregroundCount--;
    this.setWaiting(this.waitingCount - 1);
    return true;
  }

  private execute<T>(job: () => Promise<T>): Promise<T> {
    this.runningCount++;
    let result: Promise<T>;
    try {
      result = job();
    } catch (err) {
      result = Promise.reject(err as Error);
    }
    return result.finally(() => {
      this.runningCount--;
      this.next();
    });
  }

  private next(): void {
    while (this.runningCount < this.options.concurrency) {
      const tier = this.foreground.size > 0 ? this.foreground : this.background;
      const first = tier.entries().next();
      if (first.done) return;
      const [session, list] = first.value;
      const entry = list.shift()!;
      tier.delete(session);
      if (list.length > 0) tier.set(session, list); // to the back of the round
      if (entry.counted) this.foregroundCount--;
      this.setWaiting(this.waitingCount - 1);
      entry.start();
    }
  }

  private setWaiting(n: number): void {
    this.waitingCount = n;
    this.options.onDepth?.(n);
  }
}
