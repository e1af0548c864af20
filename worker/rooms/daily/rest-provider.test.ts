import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../lib/log.ts';
import { startFakeDaily, type FakeDaily } from '../../../test/fakes/daily-api.ts';
import { waitFor } from '../../../test/harness/ports.ts';
import { DailyApiError, DailyRoomProvider } from './rest-provider.ts';

/** The hosted video-room provider's REST client against the local fake of its API. */
let fake: FakeDaily;
let provider: DailyRoomProvider;

beforeAll(async () => {
  fake = await startFakeDaily();
  provider = new DailyRoomProvider({ apiKey: fake.apiKey, apiUrl: fake.url, domainId: null, log: silentLogger, deletesPerSecond: 20 });
  await provider.init();
});
afterAll(async () => {
  provider.close();
  await fake.close();
});

describe('DailyRoomProvider', () => {
  it('creates private rooms that expire and eject at expiry', async () => {
    const room = await provider.createRoom({ ttlSeconds: 900 });
    const stored = fake.rooms.get(room.name)!;
    expect(room.url).toBe(`https://voice-test.daily.co/${room.name}`);
    expect(stored.privacy).toBe('private');
    expect(stored.config).toMatchObject({ exp: room.exp, eject_at_room_exp: true });
    expect(room.exp - Date.now() / 1000).toBeGreaterThan(890);
  });

  it('self-signs meeting tokens the provider accepts, with no API call', async () => {
    const room = await provider.createRoom({ ttlSeconds: 900 });
    const calls = fake.calls.length;
    const now = Math.floor(Date.now() / 1000);
    const respondent = provider.mintToken({ room, role: 'respondent', sessionId: 'inv_a', issuedAt: now, expiresAt: now + 600 });
    const bot = provider.mintToken({ room, role: 'bot', sessionId: 'inv_a', issuedAt: now, expiresAt: now + 600 });
    expect(fake.calls.length).toBe(calls);
    expect(fake.verifyToken(respondent)).toMatchObject({ r: room.name, d: fake.domainId, iat: now, exp: now + 600, o: false, ejt: true });
    expect(fake.verifyToken(bot)).toMatchObject({ r: room.name, o: true });
    // Never beyond the room's own expiry.
    const late = provider.mintToken({ room, role: 'respondent', sessionId: 'inv_a', issuedAt: now, expiresAt: now + 99_999 });
    expect(fake.verifyToken(late).exp).toBe(room.exp);
  });

  it('deletes rooms through a throttled queue and treats 404 as done', async () => {
    const a = await provider.createRoom({ ttlSeconds: 900 });
    const b = await provider.createRoom({ ttlSeconds: 900 });
    fake.rooms.delete(b.name); // already gone at the provider
    await provider.deleteRoom(a.name);
    await provider.deleteRoom(b.name);
    await waitFor(() => provider.pendingDeletes === 0 && !fake.rooms.has(a.name), { timeoutMs: 10_000, what: 'queued deletes' });
    await expect(provider.deleteRoomNow('never-existed')).resolves.toBeUndefined();
    expect(await provider.getRoom(a.name)).toBeNull();
  });

  it('retries a failed delete later', async () => {
    const room = await provider.createRoom({ ttlSeconds: 900 });
    fake.failNext(500);
    await provider.deleteRoom(room.name);
    await waitFor(() => !fake.rooms.has(room.name), { timeoutMs: 10_000, what: 'the retried delete' });
  });

  it('surfaces the provider error code and status, never the key', async () => {
    const bad = new DailyRoomProvider({ apiKey: 'wrong-key', apiUrl: fake.url, domainId: 'd', log: silentLogger });
    const err = await bad.createRoom({ ttlSeconds: 900 }).catch((e: unknown) => e);
    bad.close();
    expect(err).toBeInstanceOf(DailyApiError);
    expect(err).toMatchObject({ status: 401, code: 'authentication-error' });
    expect((err as Error).message).not.toContain('wrong-key');
  });
});
