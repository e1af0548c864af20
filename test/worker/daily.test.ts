import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { hasEspeak, silencePcm, speechPcm, tonePcm } from '../fakes/audio.ts';
import { startFakeDaily, type FakeDaily } from '../fakes/daily-api.ts';
import { fakeDailyEnv } from '../fakes/daily-python.ts';
import { startFakeDailyRooms, type FakeDailyRooms, type FakeRespondent } from '../fakes/daily-room.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-compatible.ts';
import { waitFor } from '../harness/ports.ts';
import {
  baseEnv,
  spawnBody,
  startFakeBackend,
  startWorkerProcess,
  waitIdleSlots,
  type FakeBackend,
  type WorkerProcess,
} from './harness.ts';

/**
 * A worker with ROOM_PROVIDER=daily against the fake REST API and the fake media rooms: rooms are
 * made ahead for the warm slots, the spawn answers an https room and a self-signed token with no
 * provider call, and the bot joins through its prewarmed bridge (bridge.py with the fake `daily`
 * module) and runs the whole interview with a respondent speaking the page's app-message vocabulary.
 */
let daily: FakeDaily;
let rooms: FakeDailyRooms;
let openai: FakeOpenAI;
let backend: FakeBackend;
let worker: WorkerProcess;

beforeAll(async () => {
  [daily, openai, backend] = await Promise.all([startFakeDaily(), startFakeOpenAI({ voice: 'tone' }), startFakeBackend()]);
  rooms = await startFakeDailyRooms(daily);
  worker = await startWorkerProcess(
    baseEnv({
      redisUrl: inject('redisUrl'),
      backendUrl: backend.url,
      llmUrl: openai.url,
      REDIS_KEY_PREFIX: `daily-${Date.now()}`,
      WARM_POOL_SIZE: '2',
      ROOM_PROVIDER: 'daily',
      DAILY_API_KEY: daily.apiKey,
      DAILY_API_URL: daily.url,
      ...fakeDailyEnv(rooms.address),
    }),
  );
  await worker.waitReady();
  await waitIdleSlots(worker, 2);
}, 600_000);

afterAll(async () => {
  if (process.env.DEBUG_WORKER) console.log(worker?.logs.join(''));
  await worker?.stop();
  await Promise.all([daily?.close(), rooms?.close(), openai?.close(), backend?.close()]);
});

/** Answers each `listening` with speech then silence (16 kHz, 20 ms frames), as the page would. */
function converse(respondent: FakeRespondent, answers: string[]): Promise<string> {
  let turn = 0;
  return new Promise((resolve, reject) => {
    respondent.on('app-message', (msg: Record<string, unknown>) => {
      if (msg.type === 'ended') resolve(String(msg.reason));
      if (msg.type !== 'state' || msg.state !== 'listening') return;
      const text = answers[Math.min(turn++, answers.length - 1)]!;
      const pcm = Buffer.concat([hasEspeak() ? speechPcm(text, 16_000) : tonePcm(600, 16_000), silencePcm(600, 16_000)]);
      for (let i = 0; i < pcm.length; i += 640) respondent.sendAudio(pcm.subarray(i, i + 640));
    });
    respondent.once('bot-left', () => reject(new Error('the bot left before the interview ended')));
  });
}

describe('ROOM_PROVIDER=daily', () => {
  it('runs a whole interview through the bot bridge, then frees the slot and deletes the room', async () => {
    expect(daily.rooms.size).toBe(2);
    openai.scriptLlm('NEXT', 'The respondent liked it.');
    openai.scriptTranscripts('I liked it a lot.');
    const calls = daily.calls.length;
    const body = spawnBody();
    const res = await worker.spawnSession(body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(String(res.body.room_url)).toMatch(/^https:\/\/voice-test\.daily\.co\//);
    const roomName = String(res.body.room_url).split('/').pop()!;
    expect(daily.calls.slice(calls).filter((c) => c.path.includes('meeting-tokens') || c.method === 'POST')).toEqual([]);
    expect(daily.verifyToken(String(res.body.token))).toMatchObject({ r: roomName, d: daily.domainId, o: false });

    // The bot joins its room with its own owner token, through the bridge, before the respondent.
    await waitFor(() => rooms.botPresent(roomName), { timeoutMs: 10_000, what: 'the bot in its Daily room' });
    expect(rooms.joins.filter((j) => j.room === roomName)).toEqual([{ room: roomName, ok: true, owner: true }]);
    const respondent = rooms.joinRespondent(String(res.body.room_url), String(res.body.token));
    expect(await converse(respondent, ['I liked it a lot'])).toBe('completed');

    const captions = respondent.appMessages.filter((m) => m.type === 'caption');
    expect(captions.map((m) => [m.speaker, m.text])).toEqual([
      ['bot', 'Hi.'],
      ['bot', 'Question 1?'],
      ['respondent', 'I liked it a lot.'],
      ['bot', 'Thanks, bye.'],
    ]);
    expect(respondent.appMessages.filter((m) => m.type === 'audio_end')).toHaveLength(3);
    expect(respondent.audioBytes).toBeGreaterThan(24_000 * 2 * 0.5); // the bot's voice came through the bridge
    const stt = openai.requests.filter((r) => r.endpoint === 'stt-stream'); // realtime transcription, the default (STT_MODE)
    expect(stt.at(-1)!.audioSeconds).toBeGreaterThan(0.3); // and the respondent's reached speech-to-text

    const report = await backend.waitForReport(String(body.sessionId), 15_000);
    expect(report.body).toMatchObject({ status: 'completed', response: { summary: 'The respondent liked it.' } });
    const transcript = JSON.parse(readFileSync(fileURLToPath(report.body.response!.transcriptKey), 'utf8')) as {
      turns: Array<{ speaker: string; text: string }>;
    };
    expect(transcript.turns.filter((t) => t.speaker === 'respondent').map((t) => t.text)).toEqual(['I liked it a lot.']);

    // The bot left the room; the slot comes back with a new room and the used one is deleted.
    await waitFor(() => !rooms.botPresent(roomName), { timeoutMs: 10_000, what: 'the bot to leave its room' });
    await waitIdleSlots(worker, 2, 15_000);
    await waitFor(() => !daily.rooms.has(roomName), { timeoutMs: 5000, what: 'the used room to be deleted' });
    expect(daily.rooms.size).toBe(2);
  }, 60_000);

  it('ends the session when the respondent hangs up from the page', async () => {
    const body = spawnBody();
    const res = await worker.spawnSession(body);
    expect(res.status).toBe(200);
    const roomName = String(res.body.room_url).split('/').pop()!;
    await waitFor(() => rooms.botPresent(roomName), { timeoutMs: 10_000, what: 'the bot in its Daily room' });
    const respondent = rooms.joinRespondent(String(res.body.room_url), String(res.body.token));
    await waitFor(() => respondent.appMessages.some((m) => m.type === 'state' && m.state === 'listening'), {
      timeoutMs: 15_000,
      what: 'the first question',
    });
    respondent.sendAppMessage({ type: 'hangup' });
    const report = await backend.waitForReport(String(body.sessionId), 15_000);
    expect(report.body).toMatchObject({ status: 'failed', reason: 'respondent_hangup' });
    await waitFor(() => respondent.appMessages.some((m) => m.type === 'ended'), { timeoutMs: 5000, what: 'the end at the page' });
    expect(respondent.appMessages.find((m) => m.type === 'ended')).toEqual({ type: 'ended', reason: 'hangup' });
    await waitFor(() => !rooms.botPresent(roomName), { timeoutMs: 10_000, what: 'the bot to leave its room' });
  }, 60_000);
});

describe('ROOM_PROVIDER=daily with a bridge that cannot start', () => {
  it('keeps the slot out of the pool (503 no_capacity, not failed sessions) and logs why', async () => {
    const broken = await startWorkerProcess(
      baseEnv({
        redisUrl: inject('redisUrl'),
        backendUrl: backend.url,
        llmUrl: openai.url,
        REDIS_KEY_PREFIX: `daily-broken-${Date.now()}`,
        WARM_POOL_SIZE: '1',
        ROOM_PROVIDER: 'daily',
        DAILY_API_KEY: daily.apiKey,
        DAILY_API_URL: daily.url,
        ...fakeDailyEnv(rooms.address),
        DAILY_BRIDGE_PYTHON: '/nonexistent/python3',
      }),
    );
    try {
      await broken.waitReady();
      const why = 'its Daily bridge did not start';
      await waitFor(() => broken.logs.join('').includes(why), { timeoutMs: 20_000, what: 'the bot to say why it cannot start' });
      const line = broken.logs
        .join('')
        .split('\n')
        .find((l) => l.includes(why))!;
      expect(JSON.parse(line)).toMatchObject({
        level: 'error',
        reason: expect.stringMatching(/DAILY_BRIDGE_PYTHON=\/nonexistent\/python3.*ENOENT/),
      });
      const body = spawnBody();
      const res = await broken.spawnSession(body);
      expect(res.status).toBe(503);
      expect(res.body.error).toBe('no_capacity');
    } finally {
      await broken.stop();
    }
  }, 180_000);
});
