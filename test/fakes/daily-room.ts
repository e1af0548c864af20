import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { FakeDaily } from './daily-api.ts';

/**
 * A stand-in for Daily's media rooms, for the bot's bridge running with the fake `daily` module
 * (test/fakes/daily_module, FAKE_DAILY_ROOM=host:port): the fake SDK's CallClient connects here over
 * TCP with JSON lines. Joins are checked the way Daily checks them: the meeting token must verify
 * against the fake REST API's domain and name the room in the URL. A test respondent joins in
 * process with its own token, exchanges app messages and PCM with the bot, and leaves.
 */
interface RoomState {
  bot: Socket | null;
  respondents: Map<string, FakeRespondent>;
}

export class FakeRespondent extends EventEmitter {
  readonly id = randomUUID();
  readonly appMessages: Array<Record<string, unknown>> = [];
  audioBytes = 0;
  private readonly room: RoomState;

  constructor(room: RoomState) {
    super();
    this.room = room;
  }

  /** PCM16 mono 16 kHz, as the page's microphone would send it. */
  sendAudio(pcm: Buffer): void {
    send(this.room.bot, { type: 'audio', participantId: this.id, data: pcm.toString('base64') });
  }

  sendAppMessage(message: Record<string, unknown>): void {
    send(this.room.bot, { type: 'app_message', message, sender: this.id });
  }

  leave(): void {
    if (!this.room.respondents.delete(this.id)) return;
    send(this.room.bot, { type: 'participant_left', participant: { id: this.id, info: { isLocal: false } }, reason: 'leftCall' });
  }
}

export interface FakeDailyRooms {
  address: string;
  /** Joins as the respondent (throws like Daily would for a bad token). */
  joinRespondent(roomUrl: string, token: string): FakeRespondent;
  botPresent(roomName: string): boolean;
  /** Every bot join attempt with its outcome, for assertions. */
  joins: Array<{ room: string; ok: boolean; error?: string }>;
  close(): Promise<void>;
}

function send(socket: Socket | null, message: Record<string, unknown>): void {
  if (socket && !socket.destroyed) socket.write(`${JSON.stringify(message)}\n`);
}

function roomName(roomUrl: string): string {
  return new URL(roomUrl).pathname.replace(/^\/+/, '');
}

export async function startFakeDailyRooms(api: FakeDaily): Promise<FakeDailyRooms> {
  const rooms = new Map<string, RoomState>();
  const joins: FakeDailyRooms['joins'] = [];
  const room = (name: string) => rooms.get(name) ?? rooms.set(name, { bot: null, respondents: new Map() }).get(name)!;
  const check = (roomUrl: string, token: string, owner: boolean): string => {
    const name = roomName(roomUrl);
    const claims = api.verifyToken(token);
    if (claims.r !== name) throw new Error('token is for another room');
    if (claims.o !== owner) throw new Error(owner ? 'the bot token must be an owner token' : 'the respondent token must not be an owner token');
    return name;
  };
  const participant = (id: string, userName: string) => ({ id, info: { isLocal: false, userName } });

  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    let joined: RoomState | null = null;
    let buffered = '';
    socket.setEncoding('utf8');
    socket.on('data', (text: string) => {
      buffered += text;
      let newline;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const msg = JSON.parse(buffered.slice(0, newline)) as Record<string, unknown>;
        buffered = buffered.slice(newline + 1);
        if (msg.type === 'join') {
          try {
            const name = check(String(msg.url), String(msg.token), true);
            joined = room(name);
            joined.bot = socket;
            joins.push({ room: name, ok: true });
            send(socket, { type: 'joined' });
            for (const r of joined.respondents.values()) send(socket, { type: 'participant_joined', participant: participant(r.id, 'Respondent') });
          } catch (err) {
            joins.push({ room: roomName(String(msg.url)), ok: false, error: (err as Error).message });
            send(socket, { type: 'join_error', message: `invalid meeting token: ${(err as Error).message}` });
          }
        } else if (joined && msg.type === 'app_message') {
          for (const r of joined.respondents.values()) {
            r.appMessages.push(msg.message as Record<string, unknown>);
            r.emit('app-message', msg.message);
          }
        } else if (joined && msg.type === 'audio') {
          const pcm = Buffer.from(String(msg.data), 'base64');
          for (const r of joined.respondents.values()) {
            r.audioBytes += pcm.length;
            r.emit('audio', pcm);
          }
        } else if (msg.type === 'leave') socket.end();
      }
    });
    socket.on('close', () => {
      sockets.delete(socket);
      if (joined?.bot === socket) {
        joined.bot = null;
        for (const r of joined.respondents.values()) r.emit('bot-left');
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    address: `127.0.0.1:${port}`,
    joins,
    joinRespondent(roomUrl, token) {
      const state = room(check(roomUrl, token, false));
      const respondent = new FakeRespondent(state);
      state.respondents.set(respondent.id, respondent);
      send(state.bot, { type: 'participant_joined', participant: participant(respondent.id, 'Respondent') });
      return respondent;
    },
    botPresent: (name) => rooms.get(name)?.bot != null,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
