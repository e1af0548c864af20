import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { FakeDaily } from './daily-api.ts';

/**
 * A stand-in for Daily's media rooms, for bridges running with the fake `daily` module
 * (test/fakes/daily_module, FAKE_DAILY_ROOM=host:port): the fake SDK's CallClient connects here over
 * TCP with JSON lines. Joins are checked the way Daily checks them: the meeting token must verify
 * against the fake REST API's domain and name the room in the URL. Everyone in a room gets the
 * others' participant events, app messages and audio. A test respondent can also join in process.
 */
interface Member {
  id: string;
  owner: boolean;
  userName: string;
  deliver(message: Record<string, unknown>): void;
}

type Room = Map<string, Member>;

const info = (m: Member) => ({ id: m.id, info: { isLocal: false, isOwner: m.owner, userName: m.userName } });

function enter(room: Room, member: Member): void {
  for (const other of room.values()) {
    member.deliver({ type: 'participant_joined', participant: info(other) });
    other.deliver({ type: 'participant_joined', participant: info(member) });
  }
  room.set(member.id, member);
}

function exit(room: Room, member: Member): void {
  if (!room.delete(member.id)) return;
  for (const other of room.values()) other.deliver({ type: 'participant_left', participant: info(member), reason: 'leftCall' });
}

function broadcast(room: Room, from: Member, message: Record<string, unknown>): void {
  for (const other of room.values()) if (other !== from) other.deliver(message);
}

/** The respondent in process, in the page's place: app messages and PCM with the bot. */
export class FakeRespondent extends EventEmitter {
  readonly id = randomUUID();
  readonly appMessages: Array<Record<string, unknown>> = [];
  audioBytes = 0;
  private readonly room: Room;
  private readonly member: Member;

  constructor(room: Room) {
    super();
    this.room = room;
    this.member = { id: this.id, owner: false, userName: 'Respondent', deliver: (m) => this.receive(m) };
    enter(room, this.member);
  }

  private receive(m: Record<string, unknown>): void {
    if (m.type === 'app_message') {
      this.appMessages.push(m.message as Record<string, unknown>);
      this.emit('app-message', m.message);
    } else if (m.type === 'audio') {
      const pcm = Buffer.from(String(m.data), 'base64');
      this.audioBytes += pcm.length;
      this.emit('audio', pcm);
    } else if (m.type === 'participant_left' && (m.participant as { info: { isOwner: boolean } }).info.isOwner) {
      this.emit('bot-left');
    }
  }

  /** PCM16 mono 16 kHz, as the page's microphone would send it. */
  sendAudio(pcm: Buffer): void {
    broadcast(this.room, this.member, { type: 'audio', participantId: this.id, data: pcm.toString('base64') });
  }

  sendAppMessage(message: Record<string, unknown>): void {
    broadcast(this.room, this.member, { type: 'app_message', message, sender: this.id });
  }

  leave(): void {
    exit(this.room, this.member);
  }
}

export interface FakeDailyRooms {
  address: string;
  /** Joins as the respondent (throws like Daily would for a bad token). */
  joinRespondent(roomUrl: string, token: string): FakeRespondent;
  /** True while an owner (the bot) is in the room. */
  botPresent(roomName: string): boolean;
  /** Every join over TCP with its outcome, for assertions. */
  joins: Array<{ room: string; ok: boolean; owner?: boolean; error?: string }>;
  close(): Promise<void>;
}

export async function startFakeDailyRooms(api: FakeDaily): Promise<FakeDailyRooms> {
  const rooms = new Map<string, Room>();
  const joins: FakeDailyRooms['joins'] = [];
  const roomName = (roomUrl: string) => new URL(roomUrl).pathname.replace(/^\/+/, '');
  const admit = (roomUrl: string, token: string) => {
    const name = roomName(roomUrl);
    const claims = api.verifyToken(token);
    if (claims.r !== name) throw new Error('token is for another room');
    const room = rooms.get(name) ?? rooms.set(name, new Map()).get(name)!;
    return { name, room, owner: claims.o === true, userName: String(claims.u ?? '') };
  };

  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    const send = (message: Record<string, unknown>) => {
      if (!socket.destroyed) socket.write(`${JSON.stringify(message)}\n`);
    };
    let joined: { room: Room; member: Member } | null = null;
    let buffered = '';
    const onMessage = (msg: Record<string, unknown>) => {
      if (msg.type === 'join') {
        try {
          const { name, room, owner, userName } = admit(String(msg.url), String(msg.token));
          const member: Member = { id: randomUUID(), owner, userName, deliver: send };
          joins.push({ room: name, ok: true, owner });
          send({ type: 'joined' });
          enter(room, member);
          joined = { room, member };
        } catch (err) {
          joins.push({ room: roomName(String(msg.url)), ok: false, error: (err as Error).message });
          send({ type: 'join_error', message: `invalid meeting token: ${(err as Error).message}` });
        }
      } else if (joined && msg.type === 'app_message') {
        broadcast(joined.room, joined.member, { type: 'app_message', message: msg.message, sender: joined.member.id });
      } else if (joined && msg.type === 'audio') {
        broadcast(joined.room, joined.member, { type: 'audio', participantId: joined.member.id, data: msg.data });
      } else if (msg.type === 'leave') socket.end();
    };
    socket.setEncoding('utf8');
    socket.on('data', (text: string) => {
      buffered += text;
      let newline;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        onMessage(JSON.parse(line) as Record<string, unknown>);
      }
    });
    socket.on('close', () => {
      sockets.delete(socket);
      if (joined) exit(joined.room, joined.member);
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    address: `127.0.0.1:${port}`,
    joins,
    joinRespondent: (roomUrl, token) => new FakeRespondent(admit(roomUrl, token).room),
    botPresent: (name) => [...(rooms.get(name)?.values() ?? [])].some((m) => m.owner),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
