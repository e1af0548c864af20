import { EventEmitter } from 'node:events';
import type { BotRoom } from '../../bot/room-link.ts';
import { DailyBridge, type BridgeEvent, type BridgeOptions } from './bridge-process.ts';
import { parseDailyJoinUrl } from './join-url.ts';

/**
 * The bot's side of a Daily room, through a bridge process (bridge-process.ts). Same seam as local
 * rooms: emits `audio` (PCM16 16 kHz from the respondent), `joined`, `left`, `hangup` and `closed`;
 * control messages (state, caption, audio_end, ended) travel as Daily app messages with the same
 * JSON as docs/local-room-protocol.md, and the respondent's page sends `{type: 'hangup'}` back.
 */
export const DAILY_JOIN_TIMEOUT_MS = 20_000;

export class DailyBotRoom extends EventEmitter implements BotRoom {
  private readonly present = new Set<string>();
  private closed = false;

  private readonly bridge: DailyBridge;

  constructor(bridge: DailyBridge) {
    super();
    this.bridge = bridge;
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
    this.emit('closed');
  }

  sendControl(msg: Record<string, unknown>): void {
    if (!this.closed) this.bridge.send({ op: 'app_message', message: msg });
  }

  sendAudio(pcm: Buffer): void {
    if (!this.closed) this.bridge.sendAudio(pcm);
  }

  close(): void {
    // Queued audio and the final `ended` go out first; the bridge then leaves and exits.
    this.bridge.leave();
  }
}

/** Joins through a ready bridge; rejects (and ends the bridge) when the room refuses or is silent. */
export async function joinDailyRoom(bridge: DailyBridge, joinUrl: string, timeoutMs = DAILY_JOIN_TIMEOUT_MS): Promise<BotRoom> {
  const { roomUrl, token } = parseDailyJoinUrl(joinUrl);
  await bridge.ready;
  // Listen before joining: participants already in the room are announced right after `joined`.
  const room = new DailyBotRoom(bridge);
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
    bridge.send({ op: 'join', url: roomUrl, token });
  });
  return room;
}

/**
 * Keeps one bridge started ahead for the bot's next session (a bot runs one session at a time),
 * so a spawn never waits for Python and the SDK to load; the next one starts when a session ends.
 */
export class DailyRoomJoiner {
  private next: DailyBridge;
  private readonly options: BridgeOptions;

  constructor(options: BridgeOptions) {
    this.options = options;
    this.next = new DailyBridge(options);
  }

  async join(joinUrl: string, timeoutMs?: number): Promise<BotRoom> {
    const bridge = this.next.alive ? this.next : new DailyBridge(this.options);
    const room = await joinDailyRoom(bridge, joinUrl, timeoutMs).catch((err: unknown) => {
      this.next = new DailyBridge(this.options);
      throw err;
    });
    room.once('closed', () => {
      this.next = new DailyBridge(this.options);
    });
    return room;
  }

  /** The prewarmed bridge, for tests and memory measurements. */
  get prewarmed(): DailyBridge {
    return this.next;
  }

  close(): void {
    this.next.kill();
  }
}
