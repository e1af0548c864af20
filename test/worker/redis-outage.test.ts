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
 * Redis killed and restarted mid-run (with persistence, as production runs it), then wiped:
 * spawns fail fast with 503, readiness follows Redis, the worker recovers by itself, and an
 * acknowledged session survives the outage and completes.
 */
let redis: RedisServer;
let openai: FakeOpenAI;
let backend: FakeBackend;
let worker: WorkerProcess;

beforeAll(async () => {
  [redis, openai, backend] = await Promise.all([startRedis({ persistent: true }), startFakeOpenAI({ voice: 'tone' }), startFakeBackend()]);
  worker = await startWorkerProcess(
    baseEnv({
      redisUrl: redis.url,
      backendUrl: backend.url,
      llmUrl: openai.url,
      WARM_POOL_SIZE: '2',
      JOIN_TIMEOUT_SECONDS: '60',
      SPAWN_BUDGET_MS: '500',
    }),
  );
  await worker.waitReady();
  await waitIdleSlots(worker, 2);
});

afterAll(async () => {
  if (process.env.DEBUG_WORKER) console.log(worker?.logs.join('').slice(-6000));
  await worker?.stop();
  await Promise.all([openai?.close(), backend?.close(), redis?.stop()]);
});

describe('Redis outage', () => {
  it('fails spawns fast, drops readiness, recovers by itself and keeps acknowledged sessions', async () => {
    const acknowledged = spawnBody();
    const first = await worker.spawnSession(acknowledged);
    expect(first.status).toBe(200);

    await redis.kill();
    const t0 = Date.now();
    const during = await worker.spawnSession(spawnBody());
    expect(Date.now() - t0).toBeLessThan(3000); // SPAWN_BUDGET_MS is 500: far from a connect timeout, with room for a loaded machine
    expect(during.status).toBe(503);
    expect(during.body.error).toBe('unavailable');
    expect(during.headers['retry-after']).toBeDefined();
    await waitFor(async () => !(await worker.ready()), { timeoutMs: 5000, what: 'readiness to go false' });
    expect((await worker.metrics()).match(/worker_spawns_total\{outcome="unavailable"\} (\d+)/)?.[1]).toBe('1');

    await redis.start();
    await waitFor(() => worker.ready(), { timeoutMs: 10_000, what: 'readiness to come back' });
    // The acknowledged session is still there: same room, same token.
    const again = await worker.spawnSession(acknowledged);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    // And it still runs: the respondent joins after the outage and finishes the interview.
    const done = await runRespondent(String(first.body.room_url), String(first.body.token)).done;
    expect(done.ended).toBe('completed');
    expect((await backend.waitForReport(String(acknowledged.sessionId), 5000)).body.status).toBe('completed');
    await waitIdleSlots(worker, 2, 10_000);
  }, 45_000);

  it('rebuilds the pool when Redis comes back empty', async () => {
    const client = new Redis(redis.url);
    await client.flushall();
    // Session records are written only by spawns; the heartbeat (every 300 ms) may already be rewriting its own keys.
    expect(await client.keys('{voice}:session:*')).toEqual([]);
    // The next heartbeats put both warm slots back.
    // Its alive key too: a beat cut in two by the wipe can register the slots before the key is back,
    // and a claim in that moment finds their pod not alive (503 once, until the next beat).
    await waitFor(async () => (await client.llen('{voice}:idle')) === 2 && (await client.keys('{voice}:pod:*:alive')).length === 1, {
      timeoutMs: 10_000,
      what: 'the pool to be rebuilt',
    });
    const res = await worker.spawnSession(spawnBody());
    expect(res.status).toBe(200);
    await waitIdleSlots(worker, 1, 3000);
    client.disconnect();
  }, 20_000);

  it('starts a claimed session whose inbox delivery was lost (regression: popped, then Redis went away)', async () => {
    const prefix = `lost-${Date.now()}`;
    const owner = await startWorkerProcess(
      baseEnv({
        redisUrl: redis.url,
        backendUrl: backend.url,
        llmUrl: openai.url,
        REDIS_KEY_PREFIX: prefix,
        WARM_POOL_SIZE: '1',
        HEARTBEAT_INTERVAL_MS: '500',
        HEARTBEAT_TTL_MS: '15000',
      }),
    );
    const front = await startWorkerProcess(
      baseEnv({ redisUrl: redis.url, backendUrl: backend.url, llmUrl: openai.url, REDIS_KEY_PREFIX: prefix, WARM_POOL_SIZE: '0' }),
    );
    const client = new Redis(redis.url);
    try {
      await Promise.all([owner.waitReady(), front.waitReady()]);
      await waitIdleSlots(owner, 1);
      owner.proc.kill('SIGSTOP'); // the owner cannot read its inbox now
      // Its last BLPOP may still be blocked in Redis (and would take the delivery): wait for it to time out.
      const inboxBlocked = async () => (await client.call('CLIENT', 'LIST')) as string;
      await waitFor(
        async () =>
          !(await inboxBlocked()).split('\n').some((l) => l.includes(`name=voice-worker:inbox:pod-${owner.port}`) && / flags=b /.test(l)),
        { timeoutMs: 5000, what: "the stopped owner's BLPOP to time out in Redis" },
      );
      const body = spawnBody();
      const res = await front.spawnSession(body); // any replica may claim any slot
      expect(res.status).toBe(200);
      // The delivery is lost, as if popped by a reader that then lost Redis.
      // The owner's identity in Redis is its POD_NAME plus an incarnation id.
      const ownerInstance = (await client.smembers(`{${prefix}}:pods`)).find((p) => p.startsWith(`pod-${owner.port}~`));
      expect(await client.lpop(`{${prefix}}:pod:${ownerInstance}:inbox`)).toBe(body.sessionId);
      owner.proc.kill('SIGCONT');
      const done = await runRespondent(String(res.body.room_url), String(res.body.token)).done;
      expect(done.ended).toBe('completed');
      expect((await backend.waitForReport(String(body.sessionId), 5000)).body.status).toBe('completed');
    } finally {
      owner.proc.kill('SIGCONT');
      client.disconnect();
      await Promise.all([owner.stop(), front.stop()]);
    }
  }, 40_000);
});
