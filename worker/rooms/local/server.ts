import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { Logger } from '../../../lib/log.ts';
import { parseControlFrame } from '../control-frame.ts';
import type { RoomServer } from '../provider.ts';
import { verifyJwt } from '../tokens.ts';
import { LOCAL_INPUT_SAMPLE_RATE, LOCAL_OUTPUT_SAMPLE_RATE, type LocalRoom, type LocalRoomRegistry } from './provider.ts';

/**
 * The WebSocket side of local rooms: a two-party relay between the respondent and the bot.
 * Binary frames are 16-bit PCM and are forwarded as they are; text frames are JSON control
 * messages. The bot-only messages (`participant_joined`, `participant_left`) are documented in
 * docs/local-room-protocol.md under "Bot side".
 */
export const CLOSE_NORMAL = 1000;
export const CLOSE_FAULT = 1011;
export const CLOSE_BAD_TOKEN = 4401;
export const CLOSE_UNKNOWN_ROOM = 4404;
export const CLOSE_ALREADY_JOINED = 4409;

const BOT_TO_RESPONDENT = new Set(['state', 'caption', 'audio_end', 'interrupt', 'resume', 'ended']);
const MAX_FRAME_BYTES = 256 * 1024;
const MAX_BUFFERED_AUDIO_BYTES = 1024 * 1024;

function send(ws: WebSocket | null, data: string | Buffer): void {
  if (ws && ws.readyState === ws.OPEN) ws.send(data);
}

/**
 * Audio to a peer that does not keep up is dropped rather than queued: a respondent sending far
 * faster than real time must not grow this process's memory without bound.
 */
function relayAudio(ws: WebSocket | null, data: Buffer): void {
  if (ws && ws.bufferedAmount > MAX_BUFFERED_AUDIO_BYTES) return;
  send(ws, data);
}

/** The request's path and query, or null when the request target is not a URL path at all. */
export function parseRequestTarget(target: string | undefined): URL | null {
  if (!target?.startsWith('/')) return null;
  try {
    return new URL(target, 'http://local');
  } catch {
    return null;
  }
}

export function createLocalRoomServer(options: {
  registry: LocalRoomRegistry;
  secret: string;
  log: Logger;
  clock?: () => number;
}): RoomServer {
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  const now = () => Math.floor((options.clock ?? Date.now)() / 1000);

  const endRoom = (room: LocalRoom, code: number): void => {
    room.ended = true;
    room.respondent?.close(code);
    room.bot?.close(code);
    options.registry.delete(room.name);
  };

  const joinRespondent = (room: LocalRoom, ws: WebSocket): void => {
    room.respondent = ws;
    send(
      ws,
      JSON.stringify({
        type: 'ready',
        sessionId: room.sessionId,
        inputSampleRate: LOCAL_INPUT_SAMPLE_RATE,
        outputSampleRate: LOCAL_OUTPUT_SAMPLE_RATE,
      }),
    );
    send(room.bot, JSON.stringify({ type: 'participant_joined', role: 'respondent' }));
    ws.on('message', (data: RawData, isBinary: boolean) => {
      if (isBinary) return relayAudio(room.bot, data as Buffer);
      // A malformed control frame (not JSON, not an object) is ignored, never fatal.
      const msg = parseControlFrame(data.toString());
      if (msg?.type === 'hangup') send(room.bot, JSON.stringify({ type: 'hangup' }));
    });
    ws.on('close', () => {
      if (room.respondent !== ws) return;
      room.respondent = null;
      if (!room.ended) send(room.bot, JSON.stringify({ type: 'participant_left', role: 'respondent' }));
    });
  };

  const joinBot = (room: LocalRoom, ws: WebSocket): void => {
    room.bot = ws;
    if (room.respondent) send(ws, JSON.stringify({ type: 'participant_joined', role: 'respondent' }));
    ws.on('message', (data: RawData, isBinary: boolean) => {
      if (isBinary) return relayAudio(room.respondent, data as Buffer);
      const msg = parseControlFrame(data.toString());
      if (!msg || !BOT_TO_RESPONDENT.has(msg.type)) return;
      send(room.respondent, data.toString());
      if (msg.type === 'ended') endRoom(room, CLOSE_NORMAL);
    });
    ws.on('close', () => {
      if (room.bot !== ws) return;
      room.bot = null;
      if (room.ended) return;
      // The bot went away without saying goodbye: its process crashed or was killed.
      send(room.respondent, JSON.stringify({ type: 'ended', reason: 'failed' }));
      endRoom(room, CLOSE_FAULT);
    });
  };

  const admit = (ws: WebSocket, name: string, token: string): void => {
    const room = options.registry.get(name);
    if (!room || room.ended) return ws.close(CLOSE_UNKNOWN_ROOM, 'unknown or ended room');
    const verified = verifyJwt(token, options.secret, now());
    if (!verified.ok || verified.claims.room !== name) return ws.close(CLOSE_BAD_TOKEN, 'bad token');
    const role = verified.claims.role;
    if (role !== 'respondent' && role !== 'bot') return ws.close(CLOSE_BAD_TOKEN, 'bad token');
    if (typeof verified.claims.sid === 'string') room.sessionId ??= verified.claims.sid;
    if ((role === 'respondent' ? room.respondent : room.bot) !== null) return ws.close(CLOSE_ALREADY_JOINED, 'participant already joined');
    options.log.debug('room join', { room: name, role });
    if (role === 'respondent') joinRespondent(room, ws);
    else joinBot(room, ws);
  };

  const sweep = setInterval(() => {
    for (const room of options.registry.expired(now())) {
      if (!room.ended) send(room.respondent, JSON.stringify({ type: 'ended', reason: 'timeout' }));
      endRoom(room, CLOSE_NORMAL);
    }
  }, 5000);
  sweep.unref();

  return {
    handleUpgrade(req, socket, head) {
      // `GET //[` and the like: no URL, so no room; the caller answers 404 like any other path.
      const url = parseRequestTarget(req.url);
      if (!url) return false;
      const match = /^\/rooms\/([A-Za-z0-9_-]{1,64})$/.exec(url.pathname);
      if (!match) return false;
      const name = match[1]!;
      const token = url.searchParams.get('token') ?? '';
      wss.handleUpgrade(req, socket, head, (ws) => {
        // A bad frame (too large, malformed) emits 'error' and then closes the socket: it must
        // never become an uncaught exception that takes the worker, and every session, down.
        ws.on('error', (err) => options.log.debug('room socket error', { room: name, err }));
        try {
          admit(ws, name, token);
        } catch (err) {
          options.log.warn('room join failed', { room: name, err });
          ws.close(CLOSE_FAULT, 'join failed');
        }
      });
      return true;
    },
    closeAll() {
      clearInterval(sweep);
      for (const ws of wss.clients) ws.close(CLOSE_FAULT, 'worker shutting down');
      wss.close();
    },
  };
}
