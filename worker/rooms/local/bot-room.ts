import { EventEmitter } from 'node:events';
import { WebSocket } from 'ws';
import type { BotRoom } from '../bot-room.ts';
import { parseControlFrame } from '../control-frame.ts';

/**
 * The bot in a local room: a WebSocket participant like the respondent, joined over this worker's
 * own loopback address (docs/local-room-protocol.md, "Bot side"). The relay (server.ts) tells it
 * who joined and left; audio is PCM16 both ways, 16 kHz in and 24 kHz out.
 */
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

  /** The page drops its audio on `interrupt` and holds a `listening` it has not shown yet until `resume`. */
  pause(): void {
    this.sendControl({ type: 'interrupt' });
  }

  resume(): void {
    this.sendControl({ type: 'resume' });
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
