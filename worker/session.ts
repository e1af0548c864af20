import type { Logger } from '../lib/log.ts';
import type { BotJob, Outcome, SpanRecord } from './bot/messages.ts';
import type { RedisPool, SessionRecord } from './pool.ts';
import type { OutcomeOutbox } from './outbox.ts';
import { dailyBotJoinUrl } from './rooms/daily/join-url.ts';
import type { RoomProvider } from './rooms/provider.ts';
import type { SlotManager } from './slots.ts';
import { parseStoredSpawn } from './spawn-request.ts';
import { ATTR_POD, ATTR_SLOT_ID } from './telemetry/names.ts';
import type { WorkerMetrics } from './telemetry/metrics.ts';
import { recordSpan, remoteParent } from './telemetry/tracing.ts';

/**
 * One claim of a session, as this pod remembers it ended. The attempt number alone repeats: after
 * a Redis wipe the claim script counts from 1 again. The room does not: each claim takes the
 * slot's current room, and a slot gets a fresh room (a new random name) after every session.
 */
const claimKey = (record: Pick<SessionRecord, 'sessionId' | 'attempt' | 'roomName'>): string => `${record.sessionId}#${record.attempt}#${record.roomName}`;
/** What the report needs from the spawn: the service's attempt and this session's report token (C1). */
function reportFields(record: SessionRecord | null | undefined): { attempt?: number; reportToken: string | null } {
  const spawn = record ? parseStoredSpawn(record.spawn) : null;
  return { ...(spawn?.attempt === undefined ? {} : { attempt: spawn.attempt }), reportToken: spawn?.reportToken ?? null };
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
  /** ws(s)://127.0.0.1:<port>, where this pod's bots join local rooms. */
  internalRoomBase: string;
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
    o.slots.on('finished', (sessionId: string, outcome: Outcome) => void this.finish(sessionId, outcome));
    o.slots.on('span', (sessionId: string, span: SpanRecord) => this.onSpan(sessionId, span));
    o.slots.on('latency', (provider: string, operation: string, seconds: number) => o.metrics.providerLatency.observe({ provider, operation }, seconds));
    o.slots.on('turn', (kind: string, reason: string, latencySeconds?: number) => {
      if (kind === 'interruption') return o.metrics.interruptions.inc({ kind: reason });
      if (latencySeconds === undefined) o.metrics.turnEnds.inc({ reason });
      else o.metrics.turnLatency.observe(latencySeconds);
    });
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
    // from starting one twice, or starting again an attempt that already ended here (a retry after
    // a failure is a new attempt, see the claim script).
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
    const slot = this.o.slots.slots.get(record.slot);
    if (record.state !== 'assigned' || !slot || slot.bot.state !== 'idle') return;
    if ([...this.live.values()].some((l) => l.record.slot === record.slot)) return;
    this.o.log.warn('a claim of a session that already ended here; its slot goes back to the pool', { sessionId: record.sessionId, slot: record.slot });
    void this.o.slots.release(slot);
  }

  private start(sessionId: string, record: SessionRecord): void {
    this.live.set(sessionId, { record });
    const spawn = parseStoredSpawn(record.spawn);
    if (!spawn) {
      void this.finish(sessionId, { status: 'failed', reason: 'invalid_record', message: 'The session record in Redis could not be read.' });
      return;
    }
    const botToken = this.o.rooms.mintToken({
      room: { name: record.roomName, url: record.roomUrl, exp: record.roomExp },
      role: 'bot',
      sessionId,
      issuedAt: record.claimedAt,
      expiresAt: record.claimedAt + this.o.joinTimeoutSeconds + this.o.maxSessionSeconds,
    });
    const job: BotJob = {
      sessionId,
      interviewId: spawn.interviewId,
      interview: spawn.interview,
      // Local rooms are joined over this pod's loopback, Daily rooms through the bot's bridge, LiveKit
      // rooms at the room's own address.
      joinUrl:
        this.o.rooms.name === 'local'
          ? `${this.o.internalRoomBase}/rooms/${record.roomName}?token=${encodeURIComponent(botToken)}`
          : this.o.rooms.name === 'daily'
            ? dailyBotJoinUrl(record.roomUrl, botToken)
            : `${record.roomUrl}?token=${encodeURIComponent(botToken)}`,
      roomProvider: this.o.rooms.name,
      botCanJoin: this.o.rooms.botCanJoin,
    };
    if (!this.o.slots.assign(record.slot, job)) {
      void this.finish(sessionId, { status: 'failed', reason: 'slot_unavailable', message: 'The claimed bot slot was not available on its worker.' });
    }
  }

  /**
   * Finds claims whose inbox delivery was lost (popped just before Redis went away, say): a slot
   * that Redis has `busy` with an `assigned` session while its bot here is idle gets it now.
   */
  async recover(): Promise<void> {
    for (const slot of this.o.slots.slots.values()) {
      if (slot.bot.state !== 'idle') continue;
      const sessionId = await this.o.pool.busySession(slot.id);
      if (sessionId && !this.live.has(sessionId)) await this.begin(sessionId);
    }
  }

  private onSpan(sessionId: string, span: SpanRecord): void {
    const record = this.live.get(sessionId)?.record;
    const parent = remoteParent(record?.traceId, record?.spanId);
    recordSpan(span.name, span.startMs, span.endMs, { ...span.attributes, [ATTR_POD]: this.o.pod, [ATTR_SLOT_ID]: record?.slot ?? '' }, parent, span.error);
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
      const slot = this.o.slots.slots.get(slotId);
      if (slot && slot.bot.state === 'idle') void this.o.slots.release(slot);
    }
    this.o.slots.updateGauge();
    const task = this.record(sessionId, outcome, live?.record);
    this.pendingReports.add(task);
    await task.finally(() => this.pendingReports.delete(task));
  }

  /**
   * Stores the outcome in the session record (retrying through a short Redis outage), then hands
   * the report to the durable outbox. Stored first, so that a respondent retrying at once after a
   * failure already gets a fresh bot; the report carries the service's attempt, so the service
   * ignores it if it arrives after the retry began.
   */
  private async record(sessionId: string, outcome: Outcome, record: SessionRecord | undefined): Promise<void> {
    const finishedAt = Date.now();
    const state = outcome.status === 'completed' ? 'completed' : 'failed';
    for (let attempt = 0; attempt < 20; attempt++) {
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
    await Promise.all(sessionIds.map(async (sessionId) => {
      this.o.metrics.sessionOutcomes.inc({ status: 'failed', reason: 'worker_lost' });
      const record = await this.o.pool.session(sessionId).catch(() => null);
      if (record?.roomName) void this.o.rooms.deleteRoom(record.roomName).catch(() => undefined);
      await this.o.outbox.submit({ sessionId, outcome, ...reportFields(record) });
    }));
  }
}
