import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../lib/log.ts';
import type { BotRoom } from '../../worker/rooms/bot-room.ts';
import { bridgeEnvironment, DailyBridge } from '../../worker/rooms/daily/bridge-process.ts';
import { DailyRoomJoiner, joinDailyRoom } from '../../worker/rooms/daily/bot-room.ts';
import { encodeAudio, encodeJson, FrameDecoder } from '../../worker/rooms/daily/framing.ts';
import { DailyRoomProvider } from '../../worker/rooms/daily/rest-provider.ts';
import type { PreparedRoom } from '../../worker/rooms/provider.ts';
import { startFakeDaily, type FakeDaily } from '../fakes/daily-api.ts';
import { dailyPython, fakeDailyEnv } from '../fakes/daily-python.ts';
import { startFakeDailyRooms, type FakeDailyRooms, type FakeRespondent } from '../fakes/daily-room.ts';
import { waitFor } from '../harness/ports.ts';

/**
 * The bot's Daily room from the TypeScript side: a real bridge process (bridge.py) with the fake
 * `daily` module, real stdio framing, and the fake room server checking tokens like Daily. One test
 * runs the bridge with the real daily-python SDK (no network) and measures its memory.
 */
let api: FakeDaily;
let rooms: FakeDailyRooms;
let provider: DailyRoomProvider;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  api = await startFakeDaily();
  rooms = await startFakeDailyRooms(api);
  provider = new DailyRoomProvider({ apiKey: api.apiKey, apiUrl: api.url, domainId: null, log: silentLogger });
  await provider.init();
  env = { ...process.env, ...fakeDailyEnv(rooms.address) };
}, 600_000);

afterAll(async () => {
  provider?.close();
  await rooms?.close();
  await api?.close();
});

const now = () => Math.floor(Date.now() / 1000);
const token = (room: PreparedRoom, role: 'bot' | 'respondent') =>
  provider.mintToken({ room, role, sessionId: 'sess-1', issuedAt: now(), expiresAt: now() + 600 });
const next = <T>(emitter: NodeJS.EventEmitter, event: string) => new Promise<T>((resolve) => emitter.once(event, resolve));

describe('framing', () => {
  it('decodes frames split at any byte and refuses a corrupt stream', () => {
    const bytes = Buffer.concat([encodeJson({ op: 'join', url: 'https://x' }), encodeAudio(Buffer.from([1, 2, 3, 4]))]);
    const decoder = new FrameDecoder();
    const frames = [];
    for (let i = 0; i < bytes.length; i++) frames.push(...decoder.push(bytes.subarray(i, i + 1)));
    expect(frames).toEqual([
      { kind: 'json', value: { op: 'join', url: 'https://x' } },
      { kind: 'audio', pcm: Buffer.from([1, 2, 3, 4]) },
    ]);
    expect(() => [...new FrameDecoder().push(Buffer.from('X\0\0\0\0'))]).toThrow(/unknown frame kind 0x58/);
    expect(() => [...new FrameDecoder().push(Buffer.from([0x41, 0x10, 0, 0, 0]))]).toThrow(/exceeds/);
  });
});

describe('the bridge environment', () => {
  it("passes what Python and the SDK need and none of the worker's secrets", () => {
    const env = bridgeEnvironment({
      PATH: '/usr/bin',
      HOME: '/home/node',
      LANG: 'C.UTF-8',
      PYTHONPATH: '/x',
      HTTPS_PROXY: 'http://p:3128',
      FAKE_DAILY_ROOM: '127.0.0.1:1',
      WORKER_TOKEN: 'w',
      DAILY_API_KEY: 'k',
      OPENAI_API_KEY: 'sk',
      LLM_API_KEY: 'l',
      ROOM_TOKEN_SECRET: 's',
      REDIS_URL: 'redis://u:p@h',
    });
    expect(env).toEqual({
      PATH: '/usr/bin',
      HOME: '/home/node',
      LANG: 'C.UTF-8',
      PYTHONPATH: '/x',
      HTTPS_PROXY: 'http://p:3128',
      FAKE_DAILY_ROOM: '127.0.0.1:1',
    });
  });

  it('is what the bridge process really gets', async () => {
    const probe = resolve(mkdtempSync(join(tmpdir(), 'bridge-env-')), 'env.json');
    // The fake SDK writes its environment where DAILY_FAKE_ENV_DUMP says, if that is passed at all;
    // PYTHON* names are passed, so the probe path travels in one of those.
    const bridge = new DailyBridge({
      python: dailyPython(),
      env: { ...env, PYTHON_FAKE_ENV_DUMP: probe, WORKER_TOKEN: 'secret-worker-token', DAILY_API_KEY: 'secret-key' },
    });
    await bridge.ready;
    const seen = JSON.parse(readFileSync(probe, 'utf8')) as Record<string, string>;
    expect(seen.PYTHON_FAKE_ENV_DUMP).toBe(probe);
    expect(Object.keys(seen).filter((k) => /TOKEN|KEY|SECRET|REDIS/.test(k))).toEqual([]);
    bridge.kill();
  });
});

describe('the Daily bot room over the bridge', () => {
  it('joins with the bot token and carries audio, control messages, hang-up and leaving both ways', async () => {
    const room = await provider.createRoom({ ttlSeconds: 600 });
    const bridge = new DailyBridge({ python: dailyPython(), env });
    await bridge.ready;
    const botRoom: BotRoom = await joinDailyRoom(bridge, { url: room.url, token: token(room, 'bot') });
    expect(rooms.botPresent(room.name)).toBe(true);
    expect(rooms.joins.at(-1)).toEqual({ room: room.name, ok: true, owner: true });
    expect(botRoom.respondentPresent).toBe(false);

    const joined = next(botRoom, 'joined');
    const respondent: FakeRespondent = rooms.joinRespondent(room.url, token(room, 'respondent'));
    await joined;
    expect(botRoom.respondentPresent).toBe(true);

    // Respondent -> bot: PCM16 16 kHz, byte for byte.
    const heard: Buffer[] = [];
    botRoom.on('audio', (pcm: Buffer) => heard.push(pcm));
    const speech = Buffer.alloc(6400, 7);
    respondent.sendAudio(speech);
    await waitFor(() => Buffer.concat(heard).equals(speech), { timeoutMs: 5000, what: 'the respondent audio at the bot' });

    // Bot -> respondent: the same control vocabulary as local rooms, and the voice.
    botRoom.sendControl({ type: 'state', state: 'speaking' });
    botRoom.sendControl({ type: 'caption', speaker: 'bot', text: 'Hello', final: true });
    botRoom.sendAudio(Buffer.alloc(960 * 5, 3));
    botRoom.sendControl({ type: 'audio_end', utteranceId: 'u1' });
    await waitFor(() => respondent.appMessages.length === 3, { timeoutMs: 5000, what: 'the app messages at the respondent' });
    expect(respondent.appMessages).toEqual([
      { type: 'state', state: 'speaking' },
      { type: 'caption', speaker: 'bot', text: 'Hello', final: true },
      { type: 'audio_end', utteranceId: 'u1' },
    ]);
    expect(respondent.audioBytes).toBe(960 * 5);

    const hangup = next(botRoom, 'hangup');
    respondent.sendAppMessage({ type: 'hangup' });
    await hangup;
    const left = next(botRoom, 'left');
    respondent.leave();
    await left;
    expect(botRoom.respondentPresent).toBe(false);

    const closed = next(botRoom, 'closed');
    const exited = next<string>(bridge, 'exit');
    botRoom.close();
    await closed;
    expect(await exited).toMatch(/exited \(code 0\)/);
    await waitFor(() => !rooms.botPresent(room.name), { timeoutMs: 5000, what: 'the room to see the bot leave' });
  });

  it('stops the voice within a frame or two of a pause, not after the lead the bridge holds, and tells the page at once', async () => {
    const room = await provider.createRoom({ ttlSeconds: 600 });
    const bridge = new DailyBridge({ python: dailyPython(), env });
    await bridge.ready;
    const botRoom = await joinDailyRoom(bridge, { url: room.url, token: token(room, 'bot') });
    const joined = next(botRoom, 'joined');
    const respondent = rooms.joinRespondent(room.url, token(room, 'respondent'));
    await joined;

    const frameBytes = 960; // 20 ms at 24 kHz
    botRoom.sendControl({ type: 'state', state: 'speaking' });
    for (let i = 0; i < 100; i++) botRoom.sendAudio(Buffer.alloc(frameBytes, 5)); // two seconds of voice
    botRoom.sendControl({ type: 'audio_end', utteranceId: 'u1' });
    // A third of a second in: the worker has handed the bridge its lead (200 ms) beyond what played.
    await waitFor(() => respondent.audioBytes >= 16 * frameBytes, { timeoutMs: 5000, what: 'the voice at the respondent' });
    const atPause = respondent.audioBytes;
    botRoom.pause();
    await waitFor(() => respondent.appMessages.some((m) => m.type === 'interrupt'), { timeoutMs: 5000, what: 'the interrupt at the page' });
    await new Promise((r) => setTimeout(r, 400));
    // Before the bridge's flush, the lead played out first (about 10 frames) and the interrupt came after it.
    expect(respondent.audioBytes - atPause).toBeLessThanOrEqual(5 * frameBytes);
    expect(respondent.appMessages.map((m) => m.type)).toEqual(['state', 'interrupt']); // audio_end waits for the words

    // A backchannel: the voice goes on (the speaker sends what was not heard) and the end follows it.
    const resumedAt = respondent.audioBytes;
    for (let i = 0; i < 5; i++) botRoom.sendAudio(Buffer.alloc(frameBytes, 6)); // as Speaker.resume(): the held voice, then the room's resume
    botRoom.resume();
    await waitFor(() => respondent.appMessages.some((m) => m.type === 'audio_end'), {
      timeoutMs: 5000,
      what: 'audio_end after the resumed voice',
    });
    expect(respondent.audioBytes - resumedAt).toBe(5 * frameBytes);
    botRoom.close();
    await next(bridge, 'exit');
  });

  it('fails the join when Daily refuses the token, and ends that bridge', async () => {
    const room = await provider.createRoom({ ttlSeconds: 600 });
    const other = await provider.createRoom({ ttlSeconds: 600 });
    const bridge = new DailyBridge({ python: dailyPython(), env });
    const exited = next<string>(bridge, 'exit');
    await expect(joinDailyRoom(bridge, { url: room.url, token: token(other, 'bot') })).rejects.toThrow(
      /Daily refused the join: invalid meeting token: token is for another room/,
    );
    await exited;
    expect(bridge.alive).toBe(false);
    expect(rooms.joins.at(-1)).toEqual({ room: room.name, ok: false, error: 'token is for another room' });
    // A token that does not verify at all (another API key signed it) is refused the same way.
    const forged = token(room, 'bot').replace(/\.[^.]+$/, '.AAAA');
    await expect(joinDailyRoom(new DailyBridge({ python: dailyPython(), env }), { url: room.url, token: forged })).rejects.toThrow(
      /invalid meeting token: bad signature/,
    );
  });

  it('says which interpreter it could not start', async () => {
    const bridge = new DailyBridge({ python: '/nonexistent/python3', env });
    await expect(bridge.ready).rejects.toThrow(
      /could not start \(DAILY_BRIDGE_PYTHON=\/nonexistent\/python3\): spawn \/nonexistent\/python3 ENOENT/,
    );
    await expect(joinDailyRoom(bridge, { url: 'https://voice-test.daily.co/rm', token: 'x' })).rejects.toThrow(/DAILY_BRIDGE_PYTHON/);
  });

  it('keeps a bridge prewarmed, hands it to one session, and has the next ready for a back-to-back session', async () => {
    const joiner = new DailyRoomJoiner({ python: dailyPython(), env });
    const first = joiner.prewarmed!;
    await first.ready; // started with the joiner, before any session
    const [a, b] = [await provider.createRoom({ ttlSeconds: 600 }), await provider.createRoom({ ttlSeconds: 600 })];
    const roomA = await joiner.join({ url: a.url, token: token(a, 'bot') });
    expect(rooms.botPresent(a.name)).toBe(true);
    expect(joiner.prewarmed).toBeNull(); // the session holds it
    // The bot lets go of room A (its bridge may still be playing) and is assigned at once again.
    roomA.sendAudio(Buffer.alloc(960 * 25)); // half a second still to play in A
    roomA.close();
    const second = joiner.prewarmed!;
    expect(second).not.toBe(first);
    const roomB = await joiner.join({ url: b.url, token: token(b, 'bot') });
    expect(rooms.botPresent(b.name)).toBe(true);
    await waitFor(() => !rooms.botPresent(a.name), { timeoutMs: 5000, what: 'the first bridge to leave room A' });
    // The room sees the leave a moment before the bridge's process has exited: wait for the exit too.
    await waitFor(() => !first.alive, { timeoutMs: 5000, what: 'the first bridge to exit' });
    roomB.close();
    await waitFor(() => !rooms.botPresent(b.name), { timeoutMs: 5000, what: 'the second bridge to leave room B' });
    joiner.close();
  });
});

describe('the bridge with the real daily-python SDK', () => {
  it('imports the SDK, makes its client and custom track, reports ready, and exits cleanly; RSS noted', async () => {
    // No PYTHONPATH: the venv's pinned daily-python, not the fake. No network is needed for this.
    const { PYTHONPATH: _unused, FAKE_DAILY_ROOM: _also, ...realEnv } = env;
    const bridge = new DailyBridge({ python: dailyPython(), env: realEnv });
    const events: string[] = [];
    bridge.on('event', (e: { event: string }) => events.push(e.event));
    await bridge.ready;
    const rssKb = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${bridge.pid}/status`, 'utf8'))?.[1]);
    console.log(`daily bridge (real daily-python, idle, prewarmed): RSS ${(rssKb / 1024).toFixed(1)} MB`);
    expect(rssKb).toBeGreaterThan(10_000); // the SDK is really loaded (the fake stays far below)
    expect(rssKb).toBeLessThan(150 * 1024);
    const exited = next<string>(bridge, 'exit');
    bridge.leave();
    expect(await exited).toMatch(/exited \(code 0\)/);
    expect(events[0]).toBe('ready');
    expect(events.at(-1)).toBe('closed');
  });
});
