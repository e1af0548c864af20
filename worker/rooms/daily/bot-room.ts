import type { BotRoom } from '../bot-room.ts';
import type { JoinTicket } from '../join-ticket.ts';
import { PacedOutbound, type OutboundItem } from '../paced-outbound.ts';
import { PacedBotRoom } from '../paced-bot-room.ts';
import { DailyBridge, type BridgeEvent, type BridgeOptions } from './bridge-process.ts';

/**
 * The bot's side of a Daily room, through a bridge process (bridge-process.ts). Same seam as local
 * rooms: emits `audio` (PCM16 16 kHz from the respondent), `joined`, `left`, `hangup` and `closed`;
 * control messages (state, caption, audio_end, ended) travel as Daily app messages with the same
 * JSON as docs/local-room-protocol.md, and the respondent's page sends `{type: 'hangup'}` back.
 */
export const DAILY_JOIN_TIMEOUT_MS = 20_000;
/** How long whenClosed() waits for the bridge to play its queue out and leave. */
const DAILY_LEAVE_LIMIT_MS = 30_000;
/** The bot's voice rate into the bridge (docs/daily-bridge-protocol.md). */
const DAILY_OUTPUT_SAMPLE_RATE = 24_000;
/**
 * The bot's voice is handed to the bridge only LEAD_MS ahead of playing (enough to ride over a busy
 * event loop): an interruption drops the rest here, and the bridge's `flush` drops the lead it holds,
 * so the voice stops within the frame playing. Control messages keep their place after the audio
 * before them, here and in the bridge.
 */
const LEAD_MS = 200;

export class DailyBotRoom extends PacedBotRoom implements BotRoom {
  private readonly present = new Set<string>();
  private closed = false;
  private released = false;
  protected readonly outbound = new PacedOutbound({
    deliver: (item) => this.deliver(item),
    pace: { sampleRate: DAILY_OUTPUT_SAMPLE_RATE, leadMs: LEAD_MS },
  });

  private readonly bridge: DailyBridge;
  private readonly onRelease: () => void;

  /** `onRelease` runs once, when the bot is done with this room (close) or the room ends. */
  constructor(bridge: DailyBridge, onRelease: () => void = () => undefined) {
    super();
    this.bridge = bridge;
    this.onRelease = onRelease;
    bridge.on('audio', (pcm: Buffer) => this.emit('audio', pcm));
    bridge.on('event', (e: BridgeEvent) => this.onEvent(e));
    bridge.once('exit', () => this.markClosed());
  }

  get respondentPresent(): boolean {
    return this.present.size > 0;
  }

  private onEvent(e: BridgeEvent): void {
    if (e.event === 'participant_joined' && typeof e.id === 'string') {
      const first = this.present.size === 0;
      this.present.add(e.id);
      if (first) this.emit('joined');
    } else if (e.event === 'participant_left' && typeof e.id === 'string') {
      if (this.present.delete(e.id) && this.present.size === 0) this.emit('left');
    } else if (e.event === 'app_message') {
      const message = e.message as { type?: unknown } | null;
      if (message?.type === 'hangup' && this.present.has(String(e.sender))) this.emit('hangup');
    } else if (e.event === 'call_state' && e.state === 'left') {
      this.markClosed();
    }
  }

  private markClosed(): void {
    if (this.closed) return;
    this.closed = true;
    this.outbound.clear();
    this.release();
    this.emit('closed');
  }

  private release(): void {
    if (this.released) return;
    this.released = true;
    this.onRelease();
  }

  sendControl(msg: Record<string, unknown>): void {
    this.enqueue({ kind: 'control', msg });
  }

  sendAudio(pcm: Buffer): void {
    this.enqueue({ kind: 'audio', pcm });
  }

  protected stopVoice(): void {
    // The bridge drops the voice it holds and sends the message ahead of what it queued behind it.
    if (!this.closed) this.bridge.send({ op: 'flush', message: { type: 'interrupt' } });
  }

  close(): void {
    // Queued audio and the final `ended` go out first; the bridge then leaves and exits.
    this.outbound.resume();
    this.enqueue({ kind: 'leave' });
    this.release();
  }

  private enqueue(item: OutboundItem): void {
    if (!this.closed) this.outbound.push(item);
  }

  private deliver(item: OutboundItem): void {
    if (this.closed) return;
    if (item.kind === 'audio') this.bridge.sendAudio(item.pcm);
    else if (item.kind === 'control') this.bridge.send({ op: 'app_message', message: item.msg });
    else this.bridge.leave();
  }

  /** Settles when the bridge has left the room (its queue played out), or after a bound. */
  whenClosed(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, DAILY_LEAVE_LIMIT_MS);
      this.once('closed', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

/**
 * Joins the ticket's room (its URL, the bot's owner token) through a ready bridge; rejects (and ends
 * the bridge) when the room refuses or is silent.
 */
export async function joinDailyRoom(
  bridge: DailyBridge,
  ticket: Pick<JoinTicket, 'url' | 'token'>,
  timeoutMs = DAILY_JOIN_TIMEOUT_MS,
  onRelease?: () => void,
): Promise<BotRoom> {
  await bridge.ready;
  // Listen before joining: participants already in the room are announced right after `joined`.
  const room = new DailyBotRoom(bridge, onRelease);
  await new Promise<void>((resolve, reject) => {
    const done = (err?: Error) => {
      clearTimeout(timer);
      bridge.off('event', onEvent);
      bridge.off('exit', onExit);
      if (err) {
        bridge.kill();
        reject(err);
      } else resolve();
    };
    const onEvent = (e: BridgeEvent) => {
      if (e.event === 'joined') done();
      else if (e.event === 'join_failed') done(new Error(`Daily refused the join: ${String(e.message)}`));
    };
    const onExit = (reason: string) => done(new Error(reason));
    const timer = setTimeout(() => done(new Error(`no answer from Daily within ${timeoutMs} ms`)), timeoutMs);
    bridge.on('event', onEvent);
    bridge.once('exit', onExit);
    bridge.send({ op: 'join', url: ticket.url, token: ticket.token });
  });
  return room;
}

/**
 * Keeps one bridge started ahead for the bot's next session (a bot runs one session at a time),
 * so a spawn never waits for Python and the SDK to load. A bridge serves one session: the spare is
 * handed out at join, and the next one starts as soon as that session lets go of its room (while
 * the old bridge may still be playing its last words), or at once if the join failed.
 */
export class DailyRoomJoiner {
  private spare: DailyBridge | null;
  private readonly options: BridgeOptions;

  constructor(options: BridgeOptions) {
    this.options = options;
    this.spare = new DailyBridge(options);
  }

  async join(ticket: Pick<JoinTicket, 'url' | 'token'>, timeoutMs?: number): Promise<BotRoom> {
    const bridge = this.spare?.alive ? this.spare : new DailyBridge(this.options);
    this.spare = null;
    const prepare = () => {
      this.spare ??= new DailyBridge(this.options);
    };
    return joinDailyRoom(bridge, ticket, timeoutMs, prepare).catch((err: unknown) => {
      prepare();
      throw err;
    });
  }

  /** The prewarmed bridge (null while a session holds it), for readiness, tests and measurements. */
  get prewarmed(): DailyBridge | null {
    return this.spare;
  }

  close(): void {
    this.spare?.kill();
  }
}
