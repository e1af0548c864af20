/**
 * A bounded job queue that is fair between clients: jobs run `concurrency` at a time, and the next
 * one is taken round-robin over the clients that have jobs waiting (the fairness key: the caller's
 * address, docs/speech.md "Bounds"), then round-robin over that client's sessions (its connections
 * or realtime sessions). A client on many connections is one client: it cannot starve another that
 * has one job waiting, nor fill the queue against it.
 *
 * At most `capacity` jobs wait in all (running ones do not count), whatever they are: uploads,
 * commits, pieces decoded ahead, their retries and tails. A job that finds the queue full is
 * refused with QueueFullError (503 with Retry-After), unless room can be made fairly: an ordinary
 * job pushes out the newest background job, or else the newest job of the client holding the most
 * waiting jobs when that client holds at least two more than the newcomer's; the pushed-out job is
 * refused instead. A job whose signal aborts while it waits is dropped without running.
 *
 * Two tiers: `background` jobs (pieces of a realtime buffer decoded ahead of its commit) run only
 * when no ordinary job waits, so work someone is waiting for goes first; `promote(session)` moves a
 * session's background jobs up when that session commits and starts waiting for them.
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
  /** Arrival order: the newest job is the one pushed out. */
  seq: number;
  client: string;
  session: string;
  background: boolean;
  start: () => void;
  /** Removes the job and rejects it with `reason`. */
  drop: (reason: Error) => void;
}

export interface RunOptions {
  /** The fairness key (the caller's address); the session when not given. */
  client?: string;
  /** Aborting it drops the job if it has not started. */
  signal?: AbortSignal;
  /** Run only when no ordinary job waits (see promote). */
  background?: boolean;
}

/** Waiting jobs per client, then per session; a Map's order is the round-robin order (a served one moves to the back). */
type Tier = Map<string, Map<string, Waiting[]>>;

export interface FairQueueOptions {
  concurrency: number;
  capacity: number;
  /** Called whenever the number of waiting jobs changes (a metric). */
  onDepth?: (waiting: number) => void;
}

export class FairQueue {
  private readonly options: FairQueueOptions;
  private readonly foreground: Tier = new Map();
  private readonly background: Tier = new Map();
  private waitingCount = 0;
  private runningCount = 0;
  private arrivals = 0;

  constructor(options: FairQueueOptions) {
    this.options = options;
  }

  get waiting(): number {
    return this.waitingCount;
  }

  get running(): number {
    return this.runningCount;
  }

  /** Whether an ordinary job of `client` would be taken now (run or queued): asked before reading an upload. */
  hasRoom(client: string): boolean {
    if (this.runningCount < this.options.concurrency && this.waitingCount === 0) return true;
    return this.waitingCount < this.options.capacity || this.victim(client) !== null;
  }

  run<T>(session: string, job: () => Promise<T>, options: RunOptions = {}): Promise<T> {
    const { signal, background = false, client = session } = options;
    if (signal?.aborted) return Promise.reject(new JobAbortedError());
    if (this.runningCount < this.options.concurrency && this.waitingCount === 0) return this.execute(job);
    if (this.waitingCount >= this.options.capacity) {
      const victim = background ? null : this.victim(client);
      if (!victim) return Promise.reject(new QueueFullError());
      victim.drop(new QueueFullError());
    }
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => entry.drop(new JobAbortedError());
      const entry: Waiting = {
        seq: ++this.arrivals,
        client,
        session,
        background,
        start: () => {
          signal?.removeEventListener('abort', onAbort);
          this.execute(job).then(resolve, reject);
        },
        drop: (reason) => {
          if (!this.remove(entry)) return;
          signal?.removeEventListener('abort', onAbort);
          reject(reason);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.enqueue(background ? this.background : this.foreground, [entry]);
    });
  }

  /** The session's waiting background jobs become ordinary ones, after its ordinary jobs, in their order. */
  promote(session: string): void {
    for (const [client, sessions] of this.background) {
      const list = sessions.get(session);
      if (!list) continue;
      sessions.delete(session);
      if (sessions.size === 0) this.background.delete(client);
      for (const entry of list) entry.background = false;
      this.waitingCount -= list.length; // enqueue counts them again
      this.enqueue(this.foreground, list);
      return;
    }
  }

  /** The job to push out for an ordinary job of `client` when the queue is full, if any is fair to push out. */
  private victim(client: string): Waiting | null {
    // Background work yields to anyone's ordinary job (a piece pushed out is decoded at its commit).
    const background = this.newestOfHeaviest(this.background, () => true);
    if (background) return background;
    const own = this.countOf(client);
    return this.newestOfHeaviest(this.foreground, (name, count) => name !== client && count >= own + 2);
  }

  /** The newest job of the client with the most jobs in `tier`, if `fair` lets it go. */
  private newestOfHeaviest(tier: Tier, fair: (client: string, count: number) => boolean): Waiting | null {
    let heaviest: { name: string; count: number; lists: Waiting[][] } | null = null;
    for (const [name, sessions] of tier) {
      const lists = [...sessions.values()];
      const count = lists.reduce((n, l) => n + l.length, 0);
      if (!heaviest || count > heaviest.count) heaviest = { name, count, lists };
    }
    if (!heaviest || heaviest.count === 0 || !fair(heaviest.name, heaviest.count)) return null;
    return heaviest.lists.map((l) => l.at(-1)!).reduce((a, b) => (b.seq > a.seq ? b : a));
  }

  private countOf(client: string): number {
    let n = 0;
    for (const tier of [this.foreground, this.background]) for (const list of tier.get(client)?.values() ?? []) n += list.length;
    return n;
  }

  private enqueue(tier: Tier, entries: Waiting[]): void {
    for (const entry of entries) {
      let sessions = tier.get(entry.client);
      if (!sessions) tier.set(entry.client, (sessions = new Map()));
      const list = sessions.get(entry.session);
      if (list) list.push(entry);
      else sessions.set(entry.session, [entry]);
    }
    this.setWaiting(this.waitingCount + entries.length);
  }

  private remove(entry: Waiting): boolean {
    const tier = entry.background ? this.background : this.foreground;
    const sessions = tier.get(entry.client);
    const list = sessions?.get(entry.session);
    const index = list?.indexOf(entry) ?? -1;
    if (!sessions || !list || index < 0) return false;
    list.splice(index, 1);
    if (list.length === 0) sessions.delete(entry.session);
    if (sessions.size === 0) tier.delete(entry.client);
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
      const [client, sessions] = first.value;
      const [session, list] = sessions.entries().next().value!;
      const entry = list.shift()!;
      // Both to the back of their round.
      sessions.delete(session);
      if (list.length > 0) sessions.set(session, list);
      tier.delete(client);
      if (sessions.size > 0) tier.set(client, sessions);
      this.setWaiting(this.waitingCount - 1);
      entry.start();
    }
  }

  private setWaiting(n: number): void {
    this.waitingCount = n;
    this.options.onDepth?.(n);
  }
}
