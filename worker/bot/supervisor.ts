import { fork, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { BotEvent } from './events.ts';
import { FromBotSchema, type BotJob, type FromBot, type Outcome } from './messages.ts';
import { FailureReason } from '../../lib/failure-reasons.ts';

/**
 * One warm slot's bot process, seen from the worker. Events (typed, BotProcessEvents):
 * `ready` (warm and free), `finished` (sessionId, outcome), `telemetry` (sessionId, a typed bot
 * event), `invalid` (a message that failed its check), `exit` (code, signal). A bot that dies while busy
 * finishes its session as failed (`bot_crashed`); a new process is started unless stopping.
 */
const BOT_ENTRY = fileURLToPath(new URL('./process.ts', import.meta.url));

export type BotState = 'starting' | 'idle' | 'busy' | 'stopped';

export interface BotProcessEvents {
  ready: [];
  finished: [sessionId: string, outcome: Outcome];
  telemetry: [sessionId: string, event: BotEvent];
  invalid: [problem: string];
  exit: [code: number | null, signal: NodeJS.Signals | null, recycled: boolean];
}

export class BotProcess extends EventEmitter<BotProcessEvents> {
  state: BotState = 'starting';
  sessionId: string | null = null;
  private child: ChildProcess | null = null;
  private stopping = false;
  restarts = 0;
  /** Exits since the last `ready`: a bot that cannot even start is restarted with backoff. */
  private failedStarts = 0;
  private restartTimer: NodeJS.Timeout | null = null;
  /** The bot said it exits after its session (recycling); its exit is expected. */
  private recycling = false;

  readonly slotId: string;
  private readonly env: NodeJS.ProcessEnv;

  constructor(slotId: string, env: NodeJS.ProcessEnv) {
    super();
    this.slotId = slotId;
    this.env = env;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): void {
    this.state = 'starting';
    // Inherits the worker's execArgv (the tsx loader), so the bot runs the same TypeScript sources.
    const child = fork(BOT_ENTRY, [], { env: { ...this.env, BOT_SLOT_ID: this.slotId }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'advanced' });
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
      const lost = this.sessionId;
      this.sessionId = null;
      this.state = 'stopped';
      if (lost) {
        const outcome: Outcome = { status: 'failed', reason: FailureReason.bot_crashed, message: 'The voice bot process stopped in the middle of the interview.' };
        this.emit('finished', lost, outcome);
      }
      const recycled = this.recycling;
      this.recycling = false;
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
        this.state = 'idle';
        this.emit('ready');
        break;
      case 'telemetry':
        this.emit('telemetry', msg.sessionId, msg.event);
        break;
      case 'finished':
        if (msg.sessionId !== this.sessionId) return;
        this.sessionId = null;
        // A recycling bot is not free again: it exits, and its successor says `ready`.
        this.recycling = msg.recycle === true;
        this.state = this.recycling ? 'starting' : 'idle';
        this.emit('finished', msg.sessionId, msg.outcome);
        break;
    }
  }

  assign(job: BotJob): boolean {
    if (this.state !== 'idle' || !this.child) return false;
    this.state = 'busy';
    this.sessionId = job.sessionId;
    this.child.send({ type: 'assign', job });
    return true;
  }

  /** Ends the running session (it reports failed with `reason`). */
  interrupt(reason: string): void {
    this.child?.send({ type: 'stop', reason });
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
