import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFakeDaily, type FakeDaily } from '../fakes/daily-api.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-compatible.ts';
import { waitFor } from '../harness/ports.ts';
import { baseEnv, spawnBody, startFakeBackend, startWorkerProcess, waitIdleSlots, type FakeBackend, type WorkerProcess } from './harness.ts';

/**
 * A worker with ROOM_PROVIDER=daily against the fake REST API: rooms are made ahead for the warm
 * slots, the spawn answers an https room and a self-signed token with no provider call, and,
 * until the bot can join hosted rooms (a later issue), the session is reported failed at once.
 */
let daily: FakeDaily;
let openai: FakeOpenAI;
let backend: FakeBackend;
let worker: WorkerProcess;

beforeAll(async () => {
  [daily, openai, backend] = await Promise.all([startFakeDaily(), startFakeOpenAI({ voice: 'tone' }), startFakeBackend()]);
  worker = await startWorkerProcess(
    baseEnv({ redisUrl: inject('redisUrl'), backendUrl: backend.url, llmUrl: openai.url, REDIS_KEY_PREFIX: `daily-${Date.now()}`, WARM_POOL_SIZE: '2', ROOM_PROVIDER: 'daily', DAILY_API_KEY: daily.apiKey, DAILY_API_URL: daily.url }),
  );
  await worker.waitReady();
  await waitIdleSlots(worker, 2);
});

afterAll(async () => {
  await worker?.stop();
  await Promise.all([daily?.close(), openai?.close(), backend?.close()]);
});

describe('ROOM_PROVIDER=daily', () => {
  it('prepares a room per warm slot and answers a spawn with no provider round trip', async () => {
    expect(daily.rooms.size).toBe(2);
    const calls = daily.calls.length;
    const body = spawnBody();
    const res = await worker.spawnSession(body);
    expect(res.status).toBe(200);
    expect(String(res.body.room_url)).toMatch(/^https:\/\/voice-test\.daily\.co\//);
    const roomName = String(res.body.room_url).split('/').pop()!;
    expect(daily.calls.slice(calls).filter((c) => c.path.includes('meeting-tokens') || c.method === 'POST')).toEqual([]);
    expect(daily.verifyToken(String(res.body.token))).toMatchObject({ r: roomName, d: daily.domainId, o: false });
    // The bot cannot join hosted rooms yet: the session is failed and reported, and the slot comes back with a new room.
    expect((await backend.waitForReport(String(body.sessionId), 10_000)).body).toMatchObject({ status: 'failed', reason: 'room_transport_unsupported' });
    await waitIdleSlots(worker, 2, 10_000);
    // The used room is deleted afterwards, through the throttled queue.
    await waitFor(() => !daily.rooms.has(roomName), { timeoutMs: 5000, what: 'the used room to be deleted' });
    expect(daily.rooms.size).toBe(2);
  }, 30_000);
});
