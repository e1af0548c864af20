import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../lib/log.ts';
import { startFakeDaily, type FakeDaily } from '../../test/fakes/daily-api.ts';
import { startLiveKitServer, type LiveKitServer } from '../../test/harness/livekit-server.ts';
import { DailyRoomProvider } from './daily/rest-provider.ts';
import { LiveKitRoomProvider } from './livekit/provider.ts';
import { LocalRoomProvider, LocalRoomRegistry } from './local/provider.ts';
import type { RoomProvider } from './provider.ts';
import { verifyJwt } from './tokens.ts';
import { waitFor } from '../../test/harness/ports.ts';

/**
 * One contract suite for every RoomProvider: rooms made ahead with an expiry, tokens minted
 * locally, deterministically, accepted by whoever checks them, and deletion that tolerates repeats.
 */
interface Subject {
  provider: RoomProvider;
  scheme: RegExp;
  /** Checks a token the way the room's server does; returns the room name it is for. */
  verify(token: string): string;
  /** Whether the room's server has the room now (asked anew each time). */
  exists(name: string): Promise<boolean>;
  /** The room server's own check of a join token, when it has one: the HTTP status it answers. */
  accepts?(token: string): Promise<number>;
}

let fake: FakeDaily;
let livekit: LiveKitServer;
const subjects: Record<string, () => Subject> = {};

beforeAll(async () => {
  [fake, livekit] = await Promise.all([startFakeDaily(), startLiveKitServer()]);
  const daily = new DailyRoomProvider({ apiKey: fake.apiKey, apiUrl: fake.url, domainId: null, log: silentLogger, deletesPerSecond: 50 });
  await daily.init();
  subjects.daily = () => ({
    provider: daily,
    scheme: /^https:\/\/voice-test\.daily\.co\/[A-Za-z0-9_-]+$/,
    verify: (token) => String(fake.verifyToken(token).r),
    exists: async (name) => fake.rooms.has(name),
  });
  const registry = new LocalRoomRegistry();
  const local = new LocalRoomProvider({ publicUrl: 'https://worker.example.com', secret: 'room-secret', registry });
  subjects.local = () => ({
    provider: local,
    scheme: /^wss:\/\/worker\.example\.com\/rooms\/rm_[A-Za-z0-9_-]+$/,
    verify: (token) => {
      const result = verifyJwt(token, 'room-secret', Math.floor(Date.now() / 1000));
      if (!result.ok) throw new Error(result.reason);
      return String(result.claims.room);
    },
    exists: async (name) => registry.get(name) !== undefined,
  });
  // A real livekit-server: the room list is the server's, and tokens are checked by its own
  // /rtc/validate (what a joining client's token goes through).
  const lk = new LiveKitRoomProvider({ url: livekit.url, apiKey: livekit.apiKey, apiSecret: livekit.apiSecret });
  await lk.init();
  const httpBase = livekit.url.replace(/^ws/, 'http');
  subjects.livekit = () => ({
    provider: lk,
    scheme: /^ws:\/\/127\.0\.0\.1:\d+$/,
    verify: (token) => {
      const result = verifyJwt(token, livekit.apiSecret, Math.floor(Date.now() / 1000));
      if (!result.ok) throw new Error(result.reason);
      return String((result.claims.video as { room?: string }).room);
    },
    exists: async (name) => (await lk.api.listRooms()).some((r) => r.name === name),
    accepts: async (token) => (await fetch(`${httpBase}/rtc/validate?access_token=${encodeURIComponent(token)}`)).status,
  });
});

afterAll(async () => {
  (subjects.daily?.().provider as DailyRoomProvider | undefined)?.close();
  await Promise.all([fake?.close(), livekit?.stop()]);
});

describe.each(['daily', 'livekit', 'local'])('RoomProvider contract: %s', (name) => {
  it('creates distinct rooms ahead, with an expiry', async () => {
    const s = subjects[name]!();
    const [a, b] = await Promise.all([s.provider.createRoom({ ttlSeconds: 600 }), s.provider.createRoom({ ttlSeconds: 600 })]);
    expect(a.name).not.toBe(b.name);
    expect(a.url).toMatch(s.scheme);
    expect(a.exp - Math.floor(Date.now() / 1000)).toBeGreaterThanOrEqual(595);
    // A provider may finish its call after it answers (Daily's deletes and creates run in a queue).
    await waitFor(() => s.exists(a.name), { timeoutMs: 10_000, what: `room ${a.name} to exist` });
  });

  it('mints deterministic tokens for the room, for both roles, that the room accepts', async () => {
    const s = subjects[name]!();
    const room = await s.provider.createRoom({ ttlSeconds: 600 });
    const now = Math.floor(Date.now() / 1000);
    const request = { room, role: 'respondent' as const, sessionId: 'inv_contract', issuedAt: now, expiresAt: now + 300 };
    const token = s.provider.mintToken(request);
    expect(s.provider.mintToken(request)).toBe(token);
    expect(s.verify(token)).toBe(room.name);
    const bot = s.provider.mintToken({ ...request, role: 'bot' });
    expect(bot).not.toBe(token);
    expect(s.verify(bot)).toBe(room.name);
    if (s.accepts) {
      expect(await s.accepts(token)).toBe(200);
      expect(await s.accepts(bot)).toBe(200);
      // A token signed with another secret, or for a time already past, is refused by the server.
      expect(await s.accepts(`${token.slice(0, -4)}AAAA`)).toBe(401);
      expect(await s.accepts(s.provider.mintToken({ ...request, issuedAt: now - 600, expiresAt: now - 60 }))).toBe(401);
    }
  });

  it("gives the bot a join ticket for its own transport, with the bot's token beside the address", async () => {
    const s = subjects[name]!();
    const room = await s.provider.createRoom({ ttlSeconds: 600 });
    const now = Math.floor(Date.now() / 1000);
    const request = { room, sessionId: 'inv_ticket', issuedAt: now, expiresAt: now + 300 };
    const ticket = s.provider.botTicket(request);
    expect(ticket).toEqual({ transport: name, url: room.url, token: s.provider.mintToken({ ...request, role: 'bot' }), room: room.name });
    expect(s.verify(ticket.token)).toBe(room.name);
    if (s.accepts) expect(await s.accepts(ticket.token)).toBe(200);
  });

  it('deletes rooms, and deleting twice or an unknown room is not an error', async () => {
    const s = subjects[name]!();
    const room = await s.provider.createRoom({ ttlSeconds: 600 });
    await s.provider.deleteRoom(room.name);
    await s.provider.deleteRoom(room.name);
    await s.provider.deleteRoom('rm_unknown');
    await waitFor(async () => !(await s.exists(room.name)), { timeoutMs: 10_000, what: `room ${room.name} to be gone` });
  });
});
