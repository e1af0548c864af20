import { fork, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { BotEvent } from '../telemetry/bot-events.ts';
import { FromBotSchema, type BotJob, type FromBot, type Outcome, type ToBot } from './messages.ts';
import { FailureReason } from '../../lib/failure-reasons.ts';

/**
 * One bot process, seen from the worker. It runs up to `capacity` sessions at once
 * (BOT_SESSIONS_PER_PROCESS; 1 by default: one process per interview). Events (typed,
 * BotProcessEvents): `ready` (warm; every free place takes a session), `finished` (sessionId,
 * outcome), `telemetry` (sessionId, a typed bot event), `invalid` (a message that failed its check),
 * `exit` (code, signal). A process that dies finishes each of its sessions as failed
 * (`bot_crashed`): the isolation bound is `capacity`. A new process is started unless stopping.
 */
const BOT_ENTRY = fileURLToPath(new URL('./process.ts', import.meta.url));

/** `recycling`: the process said it exits once its sessions end; it takes none meanwhile. */
export type BotPhase = 'starting' | 'ready' | 'recycling' | 'stopped';
/** One place in a process: `idle` (can take a session now), `busy`, or neither (`starting`, `stopped`). */
export type BotState = 'starting' | 'idle' | 'busy' | 'stopped';

export interface BotProcessEvents {
  ready: [];
  finished: [sessionId: string, outcome: Outcome];
  telemetry: [sessionId: string, event: BotEvent];
  invalid: [problem: string];
  exit: [code: number | null, signal: NodeJS.Signals | null, recycled: boolean];
}

export class BotProcess extends EventEmitter<BotProcessEvents> {
  phase: BotPhase = 'starting';
  /** The sessions this process runs now. */
  readonly sessions = new Set<string>();
  private child: ChildProcess | null = null;
  private stopping = false;
  restarts = 0;
  /** Exits since the last `ready`: a bot that cannot even start is restarted with backoff. */
  private failedStarts = 0;
  private restartTimer: NodeJS.Timeout | null = null;

  readonly id: string;
  readonly capacity: number;
  private readonly env: NodeJS.ProcessEnv;

  /** `id`: names the process in logs (its slots' ids); `capacity`: sessions at once. */
  constructor(id: string, env: NodeJS.ProcessEnv, capacity = 1) {
    super();
    this.id = id;
    this.env = env;
    this.capacity = capacity;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The state of the process's next free place (one session per process: the process's own). */
  get state(): BotState {
    if (this.phase === 'ready' && this.sessions.size < this.capacity) return 'idle';
    if (this.sessions.size > 0) return 'busy';
    return this.phase === 'stopped' ? 'stopped' : 'starting';
  }

  start(): void {
    this.phase = 'starting';
    // Inherits the worker's execArgv (the tsx loader), so the bot runs the same TypeScript sources.
    const child = fork(BOT_ENTRY, [], {
      env: { ...this.env, BOT_SLOT_ID: this.id },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    this.child = child;
    child.on('message', (raw: unknown) => {
      const parsed = FromBotSchema.safeParse(raw);
      if (parsed.success) this.onMessage(parsed.data as FromBot);
      else this.emit('invalid', parsed.error.issues[0]?.message ?? 'invalid message');
    });
    child.on('error', () => undefined); // an 'exit' follows
    child.on('exit', (code, signal) => {
      if (this.child !== child) return;
      this.child = null;
      const recycled = this.phase === 'recycling' && this.sessions.size === 0;
      const lost = [...this.sessions];
      this.sessions.clear();
      this.phase = 'stopped';
      for (const sessionId of lost) {
        const outcome: Outcome = {
          status: 'failed',
          reason: FailureReason.bot_crashed,
          message: 'The voice bot process stopped in the middle of the interview.',
        };
        this.emit('finished', sessionId, outcome);
      }
      this.emit('exit', code, signal, recycled);
      if (!this.stopping) {
        this.restarts++;
        const delay = recycled ? 0 : this.failedStarts > 0 ? Math.min(30_000, 250 * 2 ** this.failedStarts) : 0;
        if (!recycled) this.failedStarts++;
        this.restartTimer = setTimeout(() => this.start(), delay);
      }
    });
  }

  private onMessage(msg: FromBot): void {
    switch (msg.type) {
      case 'ready':
        this.failedStarts = 0;
        this.phase = 'ready';
        this.emit('ready');
        break;
      case 'telemetry':
        this.emit('telemetry', msg.sessionId, msg.event);
        break;
      case 'finished':
        if (!this.sessions.delete(msg.sessionId)) return;
        this.retireIfDone();
        this.emit('finished', msg.sessionId, msg.outcome);
        break;
      case 'recycling':
        // It takes no more sessions; once the last ends it is retired, and its successor says `ready`.
        if (this.phase === 'ready') this.phase = 'recycling';
        this.retireIfDone();
        break;
    }
  }

  /**
   * Every assignment sent to the process is in `sessions` until its `finished` arrives, so once a
   * recycling process has none the retire cannot overtake a session on its way.
   */
  private retireIfDone(): void {
    if (this.phase === 'recycling' && this.sessions.size === 0) this.child?.send({ type: 'retire' } satisfies ToBot);
  }

  assign(job: BotJob): boolean {
    if (this.state !== 'idle' || !this.child) return false;
    this.sessions.add(job.sessionId);
    this.child.send({ type: 'assign', job } satisfies ToBot);
    return true;
  }

  /** Ends one running session (it reports failed with `reason`). */
  interrupt(sessionId: string, reason: string): void {
    if (this.sessions.has(sessionId)) this.child?.send({ type: 'stop', sessionId, reason } satisfies ToBot);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill('SIGTERM');
    });
  }
}
