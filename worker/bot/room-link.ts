import { EventEmitter } from 'node:events';
import { WebSocket } from 'ws';
import { parseControlFrame } from '../rooms/control-frame.ts';
import type { DailyRoomJoiner } from '../rooms/daily/bot-room.ts';
import type { RoomProviderName } from '../config.ts';
import type { BotJob } from './messages.ts';

/**
 * The bot's side of a room, whatever the transport: emits `audio` (PCM16 mono from the respondent at
 * the listening rate, 16 kHz), `joined`, `left`, `hangup` and `closed`; takes the bot's audio at
 * 24 kHz and the local-room control messages. The local room is a WebSocket participant like the
 * respondent; LiveKit rooms are in worker/rooms/livekit/.
 */
export interface BotRoom extends EventEmitter {
  readonly respondentPresent: boolean;
  sendControl(msg: Record<string, unknown>): void;
  sendAudio(pcm: Buffer): void;
  /**
   * The respondent cut in: drop the bot's audio that is queued and not yet heard, at every hop
   * this transport has (its own queue, and the respondent's player through `{type: "interrupt"}`).
   */
  interrupt(): void;
  close(): void;
  /** Settles once close() has let queued audio and messages out and left the room. */
  whenClosed(): Promise<void>;
}

class LocalBotRoom extends EventEmitter implements BotRoom {
  respondentPresent = false;

  private readonly ws: WebSocket;

  constructor(ws: WebSocket) {
    super();
    this.ws = ws;
    ws.on('message', (data, isBinary) => {
      if (isBinary) return void this.emit('audio', Buffer.isBuffer(data) ? data : Buffer.concat(data as Buffer[]));
      // Validated: a frame that is not a JSON object with a string `type` is ignored.
      const msg = parseControlFrame(Buffer.isBuffer(data) ? data.toString() : Buffer.concat(data as Buffer[]).toString());
      if (!msg) return;
      if (msg.type === 'participant_joined') {
        this.respondentPresent = true;
        this.emit('joined');
      } else if (msg.type === 'participant_left') {
        this.respondentPresent = false;
        this.emit('left');
      } else if (msg.type === 'hangup') this.emit('hangup');
    });
    ws.on('close', () => this.emit('closed'));
    ws.on('error', () => undefined); // followed by close
  }

  sendControl(msg: Record<string, unknown>): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(msg));
  }

  sendAudio(pcm: Buffer): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(pcm, { binary: true });
  }

  /** Local rooms queue nothing here: the page holds what is not yet played, and drops it on this. */
  interrupt(): void {
    this.sendControl({ type: 'interrupt' });
  }

  close(): void {
    this.ws.close(1000);
  }

  /**
   * Settles when the close handshake is done: the relay has then read everything the bot sent.
   * A process that exits sooner with unread audio in its socket makes the kernel reset the
   * connection, and the reset discards the bot's last messages (the closing words, `ended`)
   * before the relay reads them, so the respondent would be told the interview failed.
   */
  whenClosed(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, CLOSE_HANDSHAKE_LIMIT_MS);
      this.ws.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

/** The longest a closing bot waits for the relay to answer its close frame. */
const CLOSE_HANDSHAKE_LIMIT_MS = 3000;

/**
 * Joins over the worker's internal loopback address. When the worker serves TLS with a
 * certificate for its public name, the loopback hop cannot verify that name; it never leaves
 * the host, so verification is skipped for loopback addresses only.
 */
export async function joinLocalRoom(joinUrl: string, timeoutMs: number): Promise<BotRoom> {
  const host = new URL(joinUrl).hostname;
  const loopback = host === '127.0.0.1' || host === 'localhost' || host === '[::1]';
  const ws = new WebSocket(joinUrl, { rejectUnauthorized: !loopback, handshakeTimeout: timeoutMs });
  // Listen before the handshake completes: the room's first message can arrive with it.
  const room = new LocalBotRoom(ws);
  await new Promise<void>((resolve, reject) => {
    const onClose = (code: number) => reject(new Error(`room refused the bot (close ${code})`));
    ws.once('open', () => {
      ws.off('error', reject);
      ws.off('close', onClose);
      resolve();
    });
    ws.once('error', reject);
    ws.once('close', onClose);
  });
  return room;
}

/** Loads the room client of the provider ahead of the first session (the bot's prewarm). */
export async function prewarmRoomClient(provider: RoomProviderName): Promise<void> {
  if (provider === 'livekit') await import('../rooms/livekit/bot-room.ts');
}

/**
 * Joins the job's room with its provider's transport. `joinUrl` carries the bot's token: as
 * `?token=` for local rooms (the internal WebSocket address) and LiveKit (LIVEKIT_URL; the room is
 * in the token), as `?t=` for Daily, whose rooms the bot joins through its prewarmed bridge.
 */
export async function joinBotRoom(job: BotJob, daily: DailyRoomJoiner | null, timeoutMs: number): Promise<{ room: BotRoom; connectMs: number }> {
  const started = performance.now();
  const joined = (room: BotRoom) => ({ room, connectMs: performance.now() - started });
  switch (job.roomProvider) {
    case 'local':
      return joined(await joinLocalRoom(job.joinUrl, timeoutMs));
    case 'daily':
      if (!daily) throw new Error('this bot has no Daily bridge (ROOM_PROVIDER is not daily)');
      return joined(await daily.join(job.joinUrl));
    case 'livekit': {
      const url = new URL(job.joinUrl);
      const token = url.searchParams.get('token') ?? '';
      url.search = '';
      const { joinLiveKitRoom } = await import('../rooms/livekit/bot-room.ts');
      return joinLiveKitRoom(url.toString().replace(/\/$/, ''), token, timeoutMs);
    }
    default: // a provider added to ROOM_PROVIDERS must be handled here (a type error until it is)
      throw new Error(`no bot transport for ${(job.roomProvider satisfies never) as string} rooms`);
  }
}
