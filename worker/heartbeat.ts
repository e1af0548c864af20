import type { Logger } from '../lib/log.ts';
import type { Outcome } from './bot/messages.ts';
import type { RedisPool } from './pool.ts';
import type { SessionCoordinator } from './session.ts';
import type { SlotManager } from './slots.ts';
import { FailureReason } from '../lib/failure-reasons.ts';

/**
 * The pod's pulse in Redis. Every interval: refresh this pod's alive key (PX ttl), reconcile its
 * slots into the pool, and reap pods whose key lapsed. A pod is reaped only after this reaper has
 * itself seen it dead for a whole TTL, so a Redis restart that dropped fresh keys does not make
 * live pods look dead for one tick.
 */
export interface HeartbeatOptions {
  pod: string;
  intervalMs: number;
  ttlMs: number;
  pool: RedisPool;
  slots: SlotManager;
  sessions: SessionCoordinator;
  log: Logger;
}

const LOST: Outcome = {
  status: 'failed',
  reason: FailureReason.worker_lost,
  message: 'The worker running this interview stopped responding.',
};

export class Heartbeat {
  private timer: NodeJS.Timeout | null = null;
  private lastOk = 0;
  private readonly seenDead = new Map<string, number>();
  private beating = false;

  private readonly o: HeartbeatOptions;

  constructor(o: HeartbeatOptions) {
    this.o = o;
  }

  /** True while the last successful beat is younger than the TTL. */
  get healthy(): boolean {
    return Date.now() - this.lastOk < this.o.ttlMs && this.o.pool.ready;
  }

  start(): void {
    void this.beat();
    this.timer = setInterval(() => void this.beat(), this.o.intervalMs);
  }

  async beat(): Promise<void> {
    if (this.beating) return;
    this.beating = true;
    try {
      await this.o.pool.heartbeat(this.o.pod, this.o.ttlMs);
      this.lastOk = Date.now();
      await this.o.slots.reconcile();
      await this.o.sessions.recover();
      await this.reap();
    } catch (err) {
      this.o.log.debug('heartbeat failed', { err });
    } finally {
      this.beating = false;
    }
  }

  private async reap(): Promise<void> {
    const now = Date.now();
    for (const pod of await this.o.pool.pods()) {
      if (pod === this.o.pod) continue;
      if (await this.o.pool.isAlive(pod)) {
        this.seenDead.delete(pod);
        continue;
      }
      const since = this.seenDead.get(pod) ?? now;
      this.seenDead.set(pod, since);
      if (now - since < this.o.ttlMs) continue;
      const lost = await this.o.pool.reap(pod, JSON.stringify(LOST));
      this.seenDead.delete(pod);
      this.o.log.warn('reclaimed the slots of a pod that stopped heartbeating', { pod, lostSessions: lost.length });
      if (lost.length) void this.o.sessions.reportLost(lost, LOST);
    }
  }

  async stop(leave: boolean): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (leave) await this.o.pool.leave(this.o.pod).catch(() => undefined);
  }
}
