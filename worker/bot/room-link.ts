import { EventEmitter } from 'node:events';
import { WebSocket } from 'ws';
import { parseControlFrame } from '../rooms/control-frame.ts';
import type { DailyRoomJoiner } from '../rooms/daily/bot-room.ts';
import type { BotJob } from './messages.ts';

/**
 * The bot's side of a local room: a WebSocket participant like the respondent. Emits `audio`
 * (PCM buffers from the respondent), `joined`, `left`, `hangup` and `closed`.
 */
export interface BotRoom extends EventEmitter {
  readonly respondentPresent: boolean;
  sendControl(msg: Record<string, unknown>): void;
  sendAudio(pcm: Buffer): void;
  close(): void;
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

  close(): void {
    this.ws.close(1000);
  }
}

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

/** Joins the job's room with its provider's transport: Daily through the bot's prewarmed bridge. */
export async function joinBotRoom(job: BotJob, daily: DailyRoomJoiner | null): Promise<BotRoom> {
  switch (job.roomProvider) {
    case 'local':
      return joinLocalRoom(job.joinUrl, 5000);
    case 'daily':
      if (!daily) throw new Error('this bot has no Daily bridge (ROOM_PROVIDER is not daily)');
      return daily.join(job.joinUrl);
    default: // a provider added to ROOM_PROVIDERS must be handled here (a type error until it is)
      throw new Error(`no bot transport for ${(job.roomProvider satisfies never) as string} rooms`);
  }
}
