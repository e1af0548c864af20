import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
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
import { runRespondent } from './respondent.ts';

/**
 * SIGTERM with a live session: readiness false at once, no new spawns, idle slots leave the
 * shared pool, the live session finishes (or is ended at the grace deadline), then exit 0.
 */
let openai: FakeOpenAI;
let backend: FakeBackend;
const workers: WorkerProcess[] = [];
let redis: Redis;

beforeAll(async () => {
  [openai, backend] = await Promise.all([startFakeOpenAI({ voice: 'tone' }), startFakeBackend()]);
  redis = new Redis(inject('redisUrl'));
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  redis.disconnect();
  await Promise.all([openai?.close(), backend?.close()]);
});

async function startWorker(prefix: string, grace: string): Promise<WorkerProcess> {
  const w = await startWorkerProcess(
    baseEnv({
      redisUrl: inject('redisUrl'),
      backendUrl: backend.url,
      llmUrl: openai.url,
      REDIS_KEY_PREFIX: prefix,
      WARM_POOL_SIZE: '2',
      DRAIN_GRACE_SECONDS: grace,
      IDLE_TIMEOUT_SECONDS: '20',
    }),
  );
  workers.push(w);
  await w.waitReady();
  await waitIdleSlots(w, 2);
  return w;
}

describe('SIGTERM', () => {
  it('drains: not ready at once, refuses spawns, withdraws idle slots, lets the live session finish, exits 0', async () => {
    const prefix = `drain-${Date.now()}`;
    const worker = await startWorker(prefix, '20');
    const body = spawnBody();
    const spawned = await worker.spawnSession(body);
    let listening = false;
    const respondent = runRespondent(String(spawned.body.room_url), String(spawned.body.token), {
      onListening: () => ((listening = true), 'silent'),
    });
    await waitFor(() => listening, { timeoutMs: 10_000, what: 'the bot to listen' });

    worker.proc.kill('SIGTERM');
    await waitFor(async () => !(await worker.ready()), {
      timeoutMs: 4000,
      what: 'readiness false right after SIGTERM (well inside the 20 s grace)',
    });
    const refused = await worker.spawnSession(spawnBody());
    expect(refused.status).toBe(503);
    expect(refused.body.error).toBe('unavailable');
    await waitFor(async () => (await redis.llen(`{${prefix}}:idle`)) === 0, { timeoutMs: 6000, what: 'idle slots to leave the pool' });
    expect(worker.proc.exitCode).toBeNull(); // still serving the live session

    respondent.say('my answer after the signal');
    expect((await respondent.done).ended).toBe('completed');
    expect((await backend.waitForReport(String(body.sessionId), 5000)).body.status).toBe('completed');
    expect(await worker.exited).toBe(0);
    expect((await redis.smembers(`{${prefix}}:pods`)).filter((p) => p.startsWith(`pod-${worker.port}~`))).toEqual([]);
    // Nothing of the pod is left behind in Redis but the session record.
    expect((await redis.keys(`{${prefix}}:*`)).sort()).toEqual([`{${prefix}}:session:${String(body.sessionId)}`]);
  }, 40_000);

  it('ends a session still running at the end of DRAIN_GRACE_SECONDS as failed (worker_shutdown), then exits 0', async () => {
    const worker = await startWorker(`grace-${Date.now()}`, '1');
    const body = spawnBody();
    const spawned = await worker.spawnSession(body);
    let listening = false;
    const respondent = runRespondent(String(spawned.body.room_url), String(spawned.body.token), {
      onListening: () => ((listening = true), 'silent'),
    });
    await waitFor(() => listening, { timeoutMs: 10_000, what: 'the bot to listen' });
    const t0 = Date.now();
    worker.proc.kill('SIGTERM');
    expect((await respondent.done).ended).toBe('failed');
    expect((await backend.waitForReport(String(body.sessionId), 5000)).body).toMatchObject({ status: 'failed', reason: 'worker_shutdown' });
    expect(await worker.exited).toBe(0);
    expect(Date.now() - t0).toBeLessThan(8000);
  }, 30_000);
});
