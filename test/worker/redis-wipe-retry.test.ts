import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-compatible.ts';
import { waitFor } from '../harness/ports.ts';
import { startRedis, type RedisServer } from '../harness/redis.ts';
import {
  baseEnv,
  spawnBody,
  startFakeBackend,
  startWorkerProcess,
  waitIdleSlots,
  type FakeBackend,
  type WorkerProcess,
} from './harness.ts';
import { runRespondent } from './respondent.ts';

/**
 * Issue 19: after a Redis wipe, the claim script numbers a session's next claim attempt 1 again.
 * The pod still remembered attempt 1 of that session as ended, skipped the new claim, and left
 * its only slot assigned without a bot: the respondent's room stayed empty and every later spawn
 * answered 503. A claim is now told apart by its room too (a fresh room per claim), and a claim
 * the pod declines never keeps a slot. Its own Redis: FLUSHALL must not touch other test files.
 */
let redis: RedisServer;
let openai: FakeOpenAI;
let backend: FakeBackend;
let worker: WorkerProcess;
let client: Redis;

beforeAll(async () => {
  [redis, openai, backend] = await Promise.all([startRedis(), startFakeOpenAI({ voice: 'tone' }), startFakeBackend()]);
  client = new Redis(redis.url);
  worker = await startWorkerProcess(
    baseEnv({ redisUrl: redis.url, backendUrl: backend.url, llmUrl: openai.url, WARM_POOL_SIZE: '1', JOIN_TIMEOUT_SECONDS: '60' }),
  );
  await worker.waitReady();
  await waitIdleSlots(worker, 1);
});

afterAll(async () => {
  if (process.env.DEBUG_WORKER) console.log(worker?.logs.join('').slice(-6000));
  client?.disconnect();
  await worker?.stop();
  await Promise.all([openai?.close(), backend?.close(), redis?.stop()]);
});

describe('a retry after a Redis wipe', () => {
  it('gets a bot in its room, and the pod keeps taking spawns', async () => {
    const body = spawnBody({ sessionId: `inv_wipe${Date.now().toString(36)}` });
    const first = await worker.spawnSession(body);
    expect(first.status).toBe(200);
    const hungUp = await runRespondent(String(first.body.room_url), String(first.body.token), { onListening: () => 'hangup' }).done;
    expect(hungUp.ended).not.toBeNull();
    await backend.waitForReport(String(body.sessionId), 10_000);
    await waitIdleSlots(worker, 1, 15_000);

    await client.flushall();
    // The next heartbeat puts the pod's alive key and its warm slot back into the (empty) pool. Both:
    // a beat cut in two by the wipe can register the slot before the key is back, and a claim in
    // that moment finds the slot's pod not alive (503 once, until the next beat).
    await waitFor(async () => (await client.llen('{voice}:idle')) === 1 && (await client.keys('{voice}:pod:*:alive')).length === 1, {
      timeoutMs: 10_000,
      what: 'the pool to be rebuilt after FLUSHALL',
    });

    const again = await worker.spawnSession(body);
    expect(again.status).toBe(200);
    expect(again.body.room_url).not.toBe(first.body.room_url);
    // The bot joins and runs the interview: the respondent hears it speak (without the fix: only `ready`).
    const retry = runRespondent(String(again.body.room_url), String(again.body.token));
    let botSpoke = false;
    retry.socket.on('message', (data, isBinary) => void (botSpoke ||= isBinary));
    await waitFor(() => botSpoke, {
      timeoutMs: 20_000,
      what: `the bot to speak in the retried room (logs: ${worker.logs.join('').slice(-1500)})`,
    });
    expect((await retry.done).ended).toBe('completed');

    // And the slot is back for the next respondent: no 503 no_capacity for good.
    await waitIdleSlots(worker, 1, 15_000);
    const next = await worker.spawnSession(spawnBody());
    expect(next.status).toBe(200);
  }, 90_000);
});
