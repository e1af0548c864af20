import type { Logger } from '../lib/log.ts';
import type { BotJob, Outcome } from './bot/messages.ts';
import type { RedisPool, SessionRecord } from './pool.ts';
import type { OutcomeOutbox } from './outbox.ts';
import type { RoomProvider } from './rooms/provider.ts';
import type { SlotManager } from './slots.ts';
import type { WorkerMetrics } from './telemetry/metrics.ts';
import { recordBotEvent } from './telemetry/bot-telemetry.ts';
import { FailureReason } from '../lib/failure-reasons.ts';

/**
 * One claim of a session, as this pod remembers it ended. The claim number alone repeats: after a
 * Redis wipe the claim script counts from 1 again. The room does not: each claim takes the slot's
 * current room, and a slot gets a fresh room (a new random name) after every session.
 */
const claimKey = (record: Pick<SessionRecord, 'sessionId' | 'claimNumber' | 'roomName'>): string =>
  `${record.sessionId}#${record.claimNumber}#${record.roomName}`;
/** What the report needs from the spawn: the service's connect attempt and this session's report token (C1). */
function reportFields(record: SessionRecord | null | undefined): { serviceAttempt?: number; reportToken: string | null } {
  const spawn = record?.spawn;
  return {
    ...(spawn?.serviceAttempt === undefined ? {} : { serviceAttempt: spawn.serviceAttempt }),
    reportToken: spawn?.reportToken ?? null,
  };
}

/**
 * Sessions on this pod, from assignment to report. A claim made by any replica lands in this
 * pod's inbox list in Redis; we hand it to the claimed slot's bot, and when the bot finishes
 * we store the outcome in the session record, report it to the backend and release the slot.
 */
export interface SessionCoordinatorOptions {
  pod: string;
  pool: RedisPool;
  slots: SlotManager;
  rooms: RoomProvider;
  joinTimeoutSeconds: number;
  maxSessionSeconds: number;
  outbox: OutcomeOutbox;
  metrics: WorkerMetrics;
  log: Logger;
}

interface Live {
  record: SessionRecord;
}

export class SessionCoordinator {
  private readonly live = new Map<string, Live>();
  private readonly starting = new Set<string>();
  /** Sessions that ended on this pod (the most recent ones), never to be started again. */
  private readonly ended = new Set<string>();
  private readonly pendingReports = new Set<Promise<unknown>>();
  private running = false;
  private loop: Promise<void> | null = null;

  private readonly o: SessionCoordinatorOptions;

  constructor(o: SessionCoordinatorOptions) {
    this.o = o;
    o.slots.on('finished', (sessionId, outcome) => void this.finish(sessionId, outcome));
    // Telemetry is translated in one place; this only says which session (and trace) it belongs to.
    o.slots.on('telemetry', (sessionId, event) =>
      recordBotEvent(event, { metrics: o.metrics, pod: o.pod, session: this.live.get(sessionId)?.record }),
    );
  }

  get activeCount(): number {
    return this.live.size;
  }

  startInbox(): void {
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        try {
          const sessionId = await this.o.pool.nextAssignment(this.o.pod, 1);
          if (sessionId) await this.begin(sessionId);
        } catch {
          if (this.running) await new Promise((r) => setTimeout(r, 250)); // Redis away: try again soon
        }
      }
    })();
  }

  async stopInbox(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  private async begin(sessionId: string): Promise<void> {
    // Only this pod starts sessions on its slots; these sets keep the inbox and the recovery sweep
    // from starting one twice, or starting again a claim that already ended here (a retry after
    // a failure is a new claim, see the claim script).
    if (this.live.has(sessionId) || this.starting.has(sessionId)) return;
    this.starting.add(sessionId);
    try {
      const record = await this.o.pool.session(sessionId);
      if (!record || record.pod !== this.o.pod) return;
      if (this.ended.has(claimKey(record))) return this.decline(record);
      // `running` with no bot here happens when the move below reached Redis but its answer did not.
      if (record.state !== 'assigned' && record.state !== 'running') return;
      await this.o.pool.transition(sessionId, 'assigned', 'running');
      this.start(sessionId, record);
    } finally {
      this.starting.delete(sessionId);
    }
  }

  /**
   * A claim of a session that already ended here (a delivery repeated by the recovery sweep). Its
   * slot must not stay promised to it: when the record still holds the slot for a bot that will
   * never come and the slot's bot is free, the slot goes back to the pool.
   */
  private decline(record: SessionRecord): void {
    if (record.state !== 'assigned' || !this.o.slots.idleSlotIds().includes(record.slot)) return;
    if ([...this.live.values()].some((l) => l.record.slot === record.slot)) return;
    this.o.log.warn('a claim of a session that already ended here; its slot goes back to the pool', {
      sessionId: record.sessionId,
      slot: record.slot,
    });
    this.o.slots.releaseIfIdle(record.slot);
  }

  private start(sessionId: string, record: SessionRecord): void {
    this.live.set(sessionId, { record });
    const spawn = record.spawn;
    if (!spawn) {
      void this.finish(sessionId, {
        status: 'failed',
        reason: FailureReason.invalid_record,
        message: 'The session record in Redis could not be read.',
      });
      return;
    }
    const job: BotJob = {
      sessionId,
      interviewId: spawn.interviewId,
      interview: spawn.interview,
      // Where and with which token the bot joins is the transport's to say (worker/rooms/).
      ticket: this.o.rooms.botTicket({
        room: { name: record.roomName, url: record.roomUrl, exp: record.roomExp },
        sessionId,
        issuedAt: record.claimedAt,
        expiresAt: record.claimedAt + this.o.joinTimeoutSeconds + this.o.maxSessionSeconds,
      }),
    };
    if (!this.o.slots.assign(record.slot, job)) {
      void this.finish(sessionId, {
        status: 'failed',
        reason: FailureReason.slot_unavailable,
        message: 'The claimed bot slot was not available on its worker.',
      });
    }
  }

  /**
   * Finds claims whose inbox delivery was lost (popped just before Redis went away, say): a slot
   * that Redis has `busy` with an `assigned` session while its bot here is idle gets it now.
   */
  async recover(): Promise<void> {
    for (const slotId of this.o.slots.idleSlotIds()) {
      const sessionId = await this.o.pool.busySession(slotId);
      if (sessionId && !this.live.has(sessionId)) await this.begin(sessionId);
    }
  }

  async finish(sessionId: string, outcome: Outcome): Promise<void> {
    const live = this.live.get(sessionId);
    this.live.delete(sessionId);
    if (live) this.ended.add(claimKey(live.record));
    if (this.ended.size > 10_000) this.ended.delete(this.ended.values().next().value!);
    const reason = outcome.status === 'failed' ? outcome.reason : 'completed';
    this.o.metrics.sessionOutcomes.inc({ status: outcome.status, reason });
    this.o.log.info('session finished', { sessionId, status: outcome.status, reason });
    const slotId = live?.record.slot;
    if (slotId && live) {
      this.o.slots.forgetRoom(slotId, live.record.roomName);
      this.o.slots.releaseIfIdle(slotId);
    }
    this.o.slots.updateGauge();
    const task = this.record(sessionId, outcome, live?.record);
    this.pendingReports.add(task);
    await task.finally(() => this.pendingReports.delete(task));
  }

  /**
   * Stores the outcome in the session record (retrying through a short Redis outage), then hands
   * the report to the durable outbox. Stored first, so that a respondent retrying at once after a
   * failure already gets a fresh bot; the report carries the service's connect attempt, so the service
   * ignores it if it arrives after the retry began.
   */
  private async record(sessionId: string, outcome: Outcome, record: SessionRecord | undefined): Promise<void> {
    const finishedAt = Date.now();
    const state = outcome.status === 'completed' ? 'completed' : 'failed';
    for (let tries = 0; tries < 20; tries++) {
      try {
        await this.o.pool.finish(sessionId, state, JSON.stringify(outcome), false);
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    await this.o.outbox.submit({ sessionId, outcome, ...reportFields(record) }, finishedAt);
  }

  /** Resolves when no session runs on this pod and every report is done, or at the deadline. */
  async idle(deadlineMs: number): Promise<boolean> {
    while (Date.now() < deadlineMs) {
      if (this.live.size === 0 && this.o.slots.busy === 0 && this.pendingReports.size === 0) return true;
      await new Promise((r) => setTimeout(r, 100));
    }
    return false;
  }

  async settleReports(): Promise<void> {
    await Promise.allSettled([...this.pendingReports]);
  }

  /**
   * Reports sessions that a reaper found on a dead pod (or a dead incarnation of this one), and
   * deletes their rooms: a LiveKit or Daily room outlives the pod, and a respondent left in it would
   * wait in silence; a deleted room tells their page at once that the interviewer stopped (Try
   * again). A local room went with its pod; deleting it here is a no-op.
   */
  async reportLost(sessionIds: string[], outcome: Outcome): Promise<void> {
    await Promise.all(
      sessionIds.map(async (sessionId) => {
        this.o.metrics.sessionOutcomes.inc({ status: 'failed', reason: FailureReason.worker_lost });
        const record = await this.o.pool.session(sessionId).catch(() => null);
        if (record?.roomName) void this.o.rooms.deleteRoom(record.roomName).catch(() => undefined);
        await this.o.outbox.submit({ sessionId, outcome, ...reportFields(record) });
      }),
    );
  }
}
