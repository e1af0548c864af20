/**
 * A bounded job queue that is fair between sessions: jobs run `concurrency` at a time, and the
 * next one is taken round-robin over the sessions that have jobs waiting, so a session with many
 * commits queued cannot starve one with a single commit. At most `capacity` jobs wait (running
 * ones do not count); one more is refused at once with QueueFullError, which the server answers as
 * 503 with Retry-After. A job whose signal aborts while it waits is dropped without running.
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
}

export interface FairQueueOptions {
  concurrency: number;
  capacity: number;
  /** Called whenever the number of waiting jobs changes (a metric). */
  onDepth?: (waiting: number) => void;
}

export class FairQueue {
  private readonly options: FairQueueOptions;
  /** Waiting jobs per session; the Map's order is the round-robin order (a served session moves to the back). */
  private readonly sessions = new Map<string, Waiting[]>();
  private waitingCount = 0;
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

  run<T>(session: string, job: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) return Promise.reject(new JobAbortedError());
    if (this.runningCount < this.options.concurrency && this.waitingCount === 0) return this.execute(job);
    if (this.waitingCount >= this.options.capacity) return Promise.reject(new QueueFullError());
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => entry.cancel();
      const entry: Waiting = {
        start: () => {
          signal?.removeEventListener('abort', onAbort);
          this.execute(job).then(resolve, reject);
        },
        cancel: () => {
          const list = this.sessions.get(session);
          const index = list?.indexOf(entry) ?? -1;
          if (!list || index < 0) return;
          list.splice(index, 1);
          if (list.length === 0) this.sessions.delete(session);
          this.setWaiting(this.waitingCount - 1);
          reject(new JobAbortedError());
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const list = this.sessions.get(session);
      if (list) list.push(entry);
      else this.sessions.set(session, [entry]);
      this.setWaiting(this.waitingCount + 1);
    });
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
      const first = this.sessions.entries().next();
      if (first.done) return;
      const [session, list] = first.value;
      const entry = list.shift()!;
      this.sessions.delete(session);
      if (list.length > 0) this.sessions.set(session, list); // to the back of the round
      this.setWaiting(this.waitingCount - 1);
      entry.start();
    }
  }

  private setWaiting(n: number): void {
    this.waitingCount = n;
    this.options.onDepth?.(n);
  }
}
