/**
 * Leader election on a coordination.k8s.io/v1 Lease, the way client-go does it: the holder renews
 * the lease every retry period; another candidate takes over only when the record has not changed
 * for a whole lease duration by its own clock (so clocks need not agree). Updates use the
 * resourceVersion, so two candidates can never both win the same round.
 *
 * Hardened like client-go: every lease call is bounded by what is left of the renew deadline; a
 * timer steps the leader down when the deadline passes even if a call hangs; durations use the
 * monotonic clock; on loss the controller's work is stopped (and its API calls aborted) before
 * anything else, and a stopping leader releases the lease only after its workers stopped.
 */
import type { Logger } from '../lib/log.ts';
import { isConflict, isNotFound, type KubeClient, resourcePath } from './kube.ts';
import { sleep } from './watch.ts';

export interface LeaderOptions {
  kube: KubeClient;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  onStartedLeading: () => void;
  /** Resolves once the leader's work has stopped. */
  onStoppedLeading: () => Promise<void> | void;
  log: Logger;
}

interface Lease {
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: {
    holderIdentity?: string | null;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

/** MicroTime wants six fractional digits. */
const microTime = (d: Date): string => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

export class LeaderElector {
  private leading = false;
  private observed = '';
  private observedAt = 0;
  private lastRenew = 0;
  /** Monotonic time (performance.now()) the API server last answered this elector (readiness uses it). */
  lastContact = 0;
  private deadline: NodeJS.Timeout | undefined;
  private stopping: Promise<void> = Promise.resolve();
  private readonly controller = new AbortController();
  private running: Promise<void> | undefined;
  private readonly o: LeaderOptions;
  private readonly path: string;

  constructor(o: LeaderOptions) {
    this.o = o;
    this.path = resourcePath({ group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespace: o.namespace, name: o.name });
  }

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    this.running ??= this.loop();
  }

  /** Stops campaigning; a leader gives the lease up so a standby takes over at once. */
  async stop(): Promise<void> {
    this.controller.abort();
    await this.running;
    if (this.leading) {
      this.setLeading(false);
      await this.stopping; // release only once the workers stopped: no write after the standby leads
      try {
        const lease = await this.o.kube.get<Lease>(this.path);
        if (lease.spec.holderIdentity === this.o.identity) {
          lease.spec = { ...lease.spec, holderIdentity: null, leaseDurationSeconds: 1, renewTime: microTime(new Date()) };
          await this.o.kube.request('PUT', this.path, { body: lease });
        }
      } catch (err) {
        this.o.log.warn('could not release the lease', { error: err });
      }
    }
  }

  private setLeading(value: boolean): void {
    if (!value) clearTimeout(this.deadline);
    if (value === this.leading) return;
    this.leading = value;
    this.o.log.info(value ? 'became the leader' : 'stopped leading', {
      lease: `${this.o.namespace}/${this.o.name}`,
      identity: this.o.identity,
    });
    if (value) this.o.onStartedLeading();
    else
      this.stopping = this.stopping
        .then(() => this.o.onStoppedLeading())
        .catch((err: unknown) => this.o.log.warn("stopping the leader's work failed", { error: err }));
  }

  /** After a renewal: step down when the next one has not succeeded within the renew deadline. */
  private armDeadline(): void {
    clearTimeout(this.deadline);
    this.deadline = setTimeout(() => {
      this.o.log.warn('lease not renewed within the renew deadline; stepping down', {
        lease: `${this.o.namespace}/${this.o.name}`,
        renewDeadlineMs: this.o.renewDeadlineMs,
      });
      this.setLeading(false);
    }, this.o.renewDeadlineMs);
    this.deadline.unref();
  }

  /** How long the next lease call may take: what is left of the renew deadline while leading. */
  private callBudgetMs(): number {
    if (!this.leading) return this.o.renewDeadlineMs;
    return Math.max(1, this.o.renewDeadlineMs - (performance.now() - this.lastRenew));
  }

  private async loop(): Promise<void> {
    while (!this.controller.signal.aborted) {
      try {
        await this.tryAcquireOrRenew();
      } catch (err) {
        this.o.log.warn('lease round failed', { error: err });
      }
      if (this.leading && performance.now() - this.lastRenew > this.o.renewDeadlineMs) this.setLeading(false);
      await sleep(this.o.retryPeriodMs * (this.leading ? 1 : 1 + Math.random() * 0.2), this.controller.signal);
    }
  }

  private async tryAcquireOrRenew(): Promise<void> {
    const now = new Date();
    const desired = {
      holderIdentity: this.o.identity,
      leaseDurationSeconds: Math.ceil(this.o.leaseDurationMs / 1000),
      renewTime: microTime(now),
    };
    let lease: Lease;
    try {
      lease = await this.o.kube.request<Lease>('GET', this.path, { timeoutMs: this.callBudgetMs() });
      this.lastContact = performance.now();
    } catch (err) {
      if (!isNotFound(err)) throw err;
      this.lastContact = performance.now();
      await this.write(
        'POST',
        resourcePath({ group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespace: this.o.namespace }),
        {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name: this.o.name, namespace: this.o.namespace },
          spec: { ...desired, acquireTime: microTime(now), leaseTransitions: 0 },
        },
      );
      return;
    }
    const record = `${lease.spec.holderIdentity ?? ''}@${lease.spec.renewTime ?? ''}`;
    if (record !== this.observed) {
      this.observed = record;
      this.observedAt = performance.now();
    }
    const holder = lease.spec.holderIdentity ?? '';
    const mine = holder === this.o.identity;
    const duration = (lease.spec.leaseDurationSeconds ?? 15) * 1000;
    if (!mine && holder !== '' && performance.now() - this.observedAt < duration) {
      this.setLeading(false);
      return;
    }
    const spec = mine
      ? { ...lease.spec, ...desired }
      : { ...lease.spec, ...desired, acquireTime: microTime(now), leaseTransitions: (lease.spec.leaseTransitions ?? 0) + 1 };
    await this.write('PUT', this.path, { ...lease, spec });
  }

  private async write(method: 'POST' | 'PUT', path: string, body: Lease | Record<string, unknown>): Promise<void> {
    try {
      const saved = await this.o.kube.request<Lease>(method, path, { body, timeoutMs: this.callBudgetMs() });
      this.lastContact = performance.now();
      this.lastRenew = performance.now();
      this.observed = `${saved.spec.holderIdentity ?? ''}@${saved.spec.renewTime ?? ''}`;
      this.observedAt = performance.now();
      this.armDeadline();
      this.setLeading(true);
    } catch (err) {
      // Someone else wrote first: not an error, just not us this round.
      if (isConflict(err)) return;
      throw err;
    }
  }
}
