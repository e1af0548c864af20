import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../lib/env.ts';
import { silentLogger } from '../../lib/log.ts';
import {
  JoinTicketSchema,
  openBotRooms,
  openWorkerRooms,
  readRoomChoice,
  ROOM_PROVIDERS,
  roomTtlSeconds,
  TRANSPORTS,
  type RoomChoice,
} from './registry.ts';

/**
 * The one list of room transports: ROOM_PROVIDER picks one, the transport reads its own variables,
 * and the worker side it opens mints tickets its own bot side accepts. Every transport is checked
 * the same way, so a transport added to the list is checked too.
 */
const context = { workerToken: 'a-long-enough-worker-token' };
const livekitSecret = 'a-livekit-secret-of-32-characters-or-more';
/** The least environment each transport needs. */
const envFor: Record<string, Record<string, string>> = {
  daily: { DAILY_API_KEY: 'daily-key', DAILY_DOMAIN_ID: 'domain-1' },
  livekit: { LIVEKIT_URL: 'ws://127.0.0.1:7880', LIVEKIT_API_KEY: 'APIkey', LIVEKIT_API_SECRET: livekitSecret },
  local: {},
};

function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('the room transport registry', () => {
  it('lists every transport once, under the name ROOM_PROVIDER gives it, defaulting to daily', () => {
    expect(ROOM_PROVIDERS).toEqual(['daily', 'livekit', 'local']);
    for (const name of ROOM_PROVIDERS) expect(TRANSPORTS[name].name).toBe(name);
    expect(readRoomChoice(envFor.daily!, context).roomProvider).toBe('daily');
  });

  it('refuses an unknown transport with a configuration error that names ROOM_PROVIDER and the choices', () => {
    const err = configError(() => readRoomChoice({ ROOM_PROVIDER: 'zoom' }, context));
    expect(err.variable).toBe('ROOM_PROVIDER');
    expect(err.message).toBe('ROOM_PROVIDER: must be one of "daily", "livekit", "local", got "zoom"');
    // Names of Object's own properties are not transports either.
    expect(configError(() => readRoomChoice({ ROOM_PROVIDER: 'constructor' }, context)).variable).toBe('ROOM_PROVIDER');
  });

  it('lets the chosen transport read its own variables, and only its own', () => {
    expect(configError(() => readRoomChoice({ ROOM_PROVIDER: 'livekit' }, context)).variable).toBe('LIVEKIT_URL');
    expect(configError(() => readRoomChoice({ ROOM_PROVIDER: 'daily' }, context)).variable).toBe('DAILY_API_KEY');
    // Another transport's variables, even malformed, are not read.
    expect(readRoomChoice({ ROOM_PROVIDER: 'local', LIVEKIT_URL: 'not a url', DAILY_ROOM_TTL_SECONDS: 'x' }, context)).toEqual({
      roomProvider: 'local',
      rooms: { tokenSecret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) },
    });
  });

  it('gives each transport its room lifetime: at least what a claimed room needs', () => {
    const lifetimes = Object.fromEntries(
      ROOM_PROVIDERS.map((name) => [name, roomTtlSeconds(readRoomChoice({ ROOM_PROVIDER: name, ...envFor[name] }, context), 1830)]),
    );
    expect(lifetimes).toEqual({ daily: 3600, livekit: 1830 + 3600, local: 1830 + 3600 });
    // Daily's DAILY_ROOM_TTL_SECONDS is raised to fit one session.
    expect(roomTtlSeconds(readRoomChoice({ ROOM_PROVIDER: 'daily', ...envFor.daily, DAILY_ROOM_TTL_SECONDS: '600' }, context), 1830)).toBe(
      2130,
    );
  });

  it.each(ROOM_PROVIDERS)('%s: the worker side mints a bot ticket for its own transport that passes the IPC check', async (name) => {
    const choice: RoomChoice = readRoomChoice({ ROOM_PROVIDER: name, ...envFor[name] }, context);
    const side = await openWorkerRooms(choice, {
      log: silentLogger,
      publicUrl: 'https://worker.example.com',
      internalRoomBase: () => 'wss://127.0.0.1:7443',
    });
    try {
      expect(side.provider.name).toBe(name);
      expect(side.server !== null).toBe(name === 'local');
      const room = {
        name: 'rm_ticket',
        url:
          name === 'daily'
            ? 'https://voice-test.daily.co/rm_ticket'
            : name === 'livekit'
              ? 'ws://127.0.0.1:7880'
              : 'wss://worker.example.com/rooms/rm_ticket',
        exp: 2_000_000_000,
      };
      const request = { room, sessionId: 'inv_ticket', issuedAt: 1_900_000_000, expiresAt: 1_900_000_600 };
      const ticket = side.provider.botTicket(request);
      expect(JoinTicketSchema.parse(ticket)).toEqual(ticket);
      expect(ticket).toMatchObject({ transport: name, room: 'rm_ticket', token: side.provider.mintToken({ ...request, role: 'bot' }) });
      // The token travels beside the address, never inside it.
      expect(ticket.url).not.toContain(ticket.token);
      // Local rooms are joined over this replica's loopback; hosted rooms at their own address.
      expect(ticket.url).toBe(name === 'local' ? 'wss://127.0.0.1:7443/rooms/rm_ticket' : room.url);
    } finally {
      side.close();
    }
  });

  it('refuses at the IPC boundary a ticket for an unknown transport or with a token folded into nothing', () => {
    const ticket = { transport: 'local', url: 'ws://127.0.0.1:7860/rooms/rm_x', token: 'header.payload.signature', room: 'rm_x' };
    expect(JoinTicketSchema.safeParse(ticket).success).toBe(true);
    expect(JoinTicketSchema.safeParse({ ...ticket, transport: 'zoom' }).success).toBe(false);
    expect(JoinTicketSchema.safeParse({ ...ticket, token: '' }).success).toBe(false);
    expect(JoinTicketSchema.safeParse({ ...ticket, url: 'file:///etc/passwd' }).success).toBe(false);
  });
});

describe('the bot side of a transport', () => {
  it('is ready at once for local rooms, and refuses a ticket meant for another transport without naming its token', async () => {
    const rooms = await openBotRooms(readRoomChoice({ ROOM_PROVIDER: 'local' }, context));
    await rooms.ready;
    const ticket = { transport: 'livekit', url: 'ws://127.0.0.1:7880', token: 'bot-token-secret', room: 'rm_x' };
    const refused = rooms.join(ticket);
    await expect(refused).rejects.toThrow('the join ticket is for livekit rooms, but this bot runs ROOM_PROVIDER=local');
    await expect(refused).rejects.not.toThrow(/bot-token-secret/);
    rooms.close();
  });
});
