import { EventEmitter } from 'node:events';
import type { Logger } from '../lib/log.ts';
import type { BotEvent } from './telemetry/bot-events.ts';
import { BotProcess, type BotState } from './bot/supervisor.ts';
import type { BotJob, Outcome } from './bot/messages.ts';
import type { RedisPool } from './pool.ts';
import type { PreparedRoom, RoomProvider } from './rooms/provider.ts';
import type { WorkerMetrics } from './telemetry/metrics.ts';

/**
 * This pod's warm slots, each a place for one session in a bot process (BOT_SESSIONS_PER_PROCESS
 * places per process, 1 by default), with a room prepared ahead. A slot enters the
 * shared pool when its bot is warm and its room is ready; it leaves it when claimed, when the
 * pod drains, or when its pod stops heartbeating. `reconcile()` (run with every heartbeat) puts
 * back what Redis lost (an outage, a restart without persistence) and refreshes rooms that would
 * expire before a session could finish.
 */
export interface Slot {
  id: string;
  /** The process this slot is a place in; it may hold other slots. */
  bot: BotProcess;
  /** The session running in this slot. */
  sessionId: string | null;
  room: PreparedRoom | null;
  preparing: boolean;
  /** Set when the slot's session ended here: Redis may still say `busy` until we register it. */
  reclaimed: boolean;
}

export interface SlotManagerOptions {
  pod: string;
  size: number;
  /** Slots per bot process. */
  sessionsPerProcess: number;
  env: NodeJS.ProcessEnv;
  pool: RedisPool;
  rooms: RoomProvider;
  /** Room lifetime when prepared, and the least a claimed room must still have left. */
  roomTtlSeconds: number;
  minRoomSeconds: number;
  metrics: WorkerMetrics;
  log: Logger;
}

export interface SlotManagerEvents {
  finished: [sessionId: string, outcome: Outcome];
  telemetry: [sessionId: string, event: BotEvent];
}

/** Re-emits its bots' `finished` and `telemetry` events, whichever slot they come from. */
export class SlotManager extends EventEmitter<SlotManagerEvents> {
  private readonly slots = new Map<string, Slot>();
  private draining = false;

  private readonly options: SlotManagerOptions;

  constructor(options: SlotManagerOptions) {
    super();
    this.options = options;
  }

  start(): void {
    const { size, sessionsPerProcess } = this.options;
    for (let first = 0; first < size; first += sessionsPerProcess) {
      const ids = Array.from({ length: Math.min(sessionsPerProcess, size - first) }, (_, i) => `${this.options.pod}/${first + i}`);
      const bot = new BotProcess(ids.join(','), this.options.env, ids.length);
      const slots = ids.map((id): Slot => ({ id, bot, sessionId: null, room: null, preparing: false, reclaimed: false }));
      for (const slot of slots) this.slots.set(slot.id, slot);
      bot.on('ready', () => {
        for (const slot of slots) void this.release(slot);
      });
      bot.on('invalid', (problem) => this.options.log.warn('ignored an invalid message from a bot', { slots: bot.id, problem }));
      bot.on('finished', (sessionId, outcome) => {
        const slot = slots.find((s) => s.sessionId === sessionId);
        if (slot) slot.sessionId = null;
        this.emit('finished', sessionId, outcome);
      });
      bot.on('telemetry', (sessionId, event) => this.emit('telemetry', sessionId, event));
      bot.on('exit', (code, signal, recycled) => {
        if (!this.draining) {
          this.options.metrics.botRestarts.inc({ reason: recycled ? 'recycled' : (signal ?? `exit_${code}`) });
          if (recycled) this.options.log.info('bot process recycled after a session that held a lot of audio', { slots: bot.id });
          else this.options.log.warn('bot process exited; starting a new one', { slots: bot.id, code, signal });
        }
      });
      bot.start();
    }
  }

  /** One slot's state: `idle` while its process takes sessions and the slot has none. */
  private state(slot: Slot): BotState {
    if (slot.sessionId) return 'busy';
    const phase = slot.bot.phase;
    return phase === 'ready' ? 'idle' : phase === 'stopped' ? 'stopped' : 'starting';
  }

  /** Puts a warm, free slot (back) into the shared pool with a fresh room. */
  async release(slot: Slot): Promise<void> {
    slot.room = null;
    slot.reclaimed = true;
    await this.prepare(slot);
  }

  private async prepare(slot: Slot): Promise<void> {
    if (this.draining || slot.preparing || this.state(slot) !== 'idle') return;
    slot.preparing = true;
    let fresh: PreparedRoom | null = null;
    try {
      const nowSeconds = Math.floor(Date.now() / 1000);
      const stale = !slot.room || slot.room.exp - nowSeconds < this.options.minRoomSeconds + 60;
      fresh = stale ? await this.options.rooms.createRoom({ ttlSeconds: this.options.roomTtlSeconds }) : null;
      const room = fresh ?? slot.room!;
      if (this.draining || this.state(slot) !== 'idle') {
        if (fresh) void this.options.rooms.deleteRoom(fresh.name);
        return;
      }
      // Only a slot whose session ended here may overrule a `busy` in Redis; otherwise `busy` means
      // a claim is on its way through the inbox.
      const registered = await this.options.pool.registerIdle(
        this.options.pod,
        { slotId: slot.id, roomName: room.name, roomUrl: room.url, roomExp: room.exp },
        slot.reclaimed,
      );
      if (registered) slot.reclaimed = false;
      if (fresh) {
        // The old room goes only once the slot holds the new one: a claim that took the old room
        // a moment ago (registered === false) keeps it, and the unused new room goes instead.
        const unused = registered ? slot.room : fresh;
        if (registered) slot.room = fresh;
        if (unused) void this.options.rooms.deleteRoom(unused.name);
        fresh = null;
      }
    } catch (err) {
      // Keep a room made for nothing yet, rather than make another on the next try.
      if (fresh && !slot.room) slot.room = fresh;
      else if (fresh) void this.options.rooms.deleteRoom(fresh.name);
      // Redis or the room provider is away; the next reconcile tries again.
      this.options.log.warn('could not put a slot into the pool yet', { slot: slot.id, err });
    } finally {
      slot.preparing = false;
      this.updateGauge();
    }
  }

  async reconcile(): Promise<void> {
    await Promise.all([...this.slots.values()].map((slot) => this.prepare(slot)));
  }

  assign(slotId: string, job: BotJob): boolean {
    const slot = this.slots.get(slotId);
    const ok = slot !== undefined && this.state(slot) === 'idle' && slot.bot.assign(job);
    if (ok) slot.sessionId = job.sessionId;
    this.updateGauge();
    return ok;
  }

  /** The slot's room after its session: deleted (throttled for hosted rooms), a fresh one comes with release(). */
  forgetRoom(slotId: string, roomName: string): void {
    const slot = this.slots.get(slotId);
    if (slot?.room?.name === roomName) slot.room = null;
    void this.options.rooms.deleteRoom(roomName).catch(() => undefined);
  }

  /** The slots whose bot here is free (for the recovery sweep: Redis may say one of them is busy). */
  idleSlotIds(): string[] {
    return [...this.slots.values()].filter((s) => this.state(s) === 'idle').map((s) => s.id);
  }

  /** After its session: a slot whose bot is free again goes back into the pool with a fresh room. */
  releaseIfIdle(slotId: string): void {
    const slot = this.slots.get(slotId);
    if (slot && this.state(slot) === 'idle') void this.release(slot);
  }

  get busy(): number {
    return [...this.slots.values()].filter((s) => s.sessionId !== null).length;
  }

  updateGauge(): void {
    const idle = this.draining ? 0 : [...this.slots.values()].filter((s) => this.state(s) === 'idle' && s.room !== null).length;
    this.options.metrics.idleSlots.set(idle);
    this.options.metrics.activeSessions.set(this.busy);
  }

  /** Takes this pod's idle slots out of the shared pool; returns how many left it. */
  async withdraw(): Promise<number> {
    this.draining = true;
    this.updateGauge();
    const ids = [...this.slots.values()].filter((s) => s.sessionId === null).map((s) => s.id);
    try {
      return (await this.options.pool.withdraw(ids)).length;
    } catch (err) {
      this.options.log.warn('could not withdraw idle slots (Redis away); they lapse with the heartbeat', { err });
      return 0;
    }
  }

  interruptAll(reason: string): void {
    for (const slot of this.slots.values()) if (slot.sessionId) slot.bot.interrupt(slot.sessionId, reason);
  }

  async stop(): Promise<void> {
    this.draining = true;
    await Promise.all([...new Set([...this.slots.values()].map((s) => s.bot))].map((bot) => bot.stop()));
  }
}
