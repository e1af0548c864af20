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

/**
 * Several worker processes share one Redis pool. Many simultaneous spawns against a fixed number
 * of slots: exactly that many succeed, the rest get 503, and no slot is ever handed out twice,
 * not even a slot of a pod that died (its sessions are reported failed by the survivors).
 */
const PODS = 3;
const SLOTS_PER_POD = 2;
const prefix = `conc-${Date.now()}`;
let openai: FakeOpenAI;
let backend: FakeBackend;
let workers: WorkerProcess[] = [];
let redis: Redis;

beforeAll(async () => {
  [openai, backend] = await Promise.all([startFakeOpenAI({ voice: 'tone' }), startFakeBackend()]);
  redis = new Redis(inject('redisUrl'));
  const env = baseEnv({
    redisUrl: inject('redisUrl'),
    backendUrl: backend.url,
    llmUrl: openai.url,
    REDIS_KEY_PREFIX: prefix,
    WARM_POOL_SIZE: String(SLOTS_PER_POD),
    JOIN_TIMEOUT_SECONDS: '4',
  });
  workers = await Promise.all(Array.from({ length: PODS }, () => startWorkerProcess(env)));
  await Promise.all(workers.map((w) => w.waitReady()));
  await Promise.all(workers.map((w) => waitIdleSlots(w, SLOTS_PER_POD)));
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  redis?.disconnect();
  await Promise.all([openai?.close(), backend?.close()]);
});

async function burst(count: number) {
  const bodies = Array.from({ length: count }, () => spawnBody());
  const answers = await Promise.all(bodies.map((b, i) => workers[i % workers.length]!.spawnSession(b)));
  const slots = await Promise.all(bodies.map((b) => redis.hget(`{${prefix}}:session:${String(b.sessionId)}`, 'slot')));
  return { bodies, answers, slots };
}

describe('many simultaneous spawns on a shared pool', () => {
  it('gives exactly the free slots, each once, and 503 no_capacity to the rest', async () => {
    const { answers, slots } = await burst(20);
    const ok = answers.filter((a) => a.status === 200);
    expect(ok).toHaveLength(PODS * SLOTS_PER_POD);
    expect(answers.filter((a) => a.status === 503).every((a) => a.body.error === 'no_capacity' && a.headers['retry-after'] === '2')).toBe(
      true,
    );
    expect(answers.filter((a) => a.status !== 200 && a.status !== 503)).toEqual([]);
    const claimed = slots.filter((s): s is string => s !== null);
    expect(new Set(claimed).size).toBe(PODS * SLOTS_PER_POD);
    expect(new Set(ok.map((a) => a.body.room_url)).size).toBe(PODS * SLOTS_PER_POD);
    // Every pod's slots were used, whichever replica took the request.
    expect(new Set(claimed.map((s) => s.split('/')[0])).size).toBe(PODS);
  }, 30_000);

  it('reclaims the slots of a killed pod: its sessions are reported failed and its slots are never handed out again', async () => {
    // The sessions above end (nobody joins within JOIN_TIMEOUT_SECONDS) and the slots come back.
    await Promise.all(workers.map((w) => waitIdleSlots(w, SLOTS_PER_POD, 20_000)));
    const { bodies, answers, slots } = await burst(PODS * SLOTS_PER_POD);
    expect(answers.every((a) => a.status === 200)).toBe(true);
    const victim = workers[0]!;
    const victimPod = `pod-${victim.port}~`; // POD_NAME plus its incarnation id
    const lost = bodies.filter((_, i) => slots[i]!.startsWith(victimPod)).map((b) => String(b.sessionId));
    expect(lost).toHaveLength(SLOTS_PER_POD);
    await victim.stop(); // SIGKILL: no drain, no goodbye; its bots die with their parent gone
    workers = workers.slice(1);
    for (const sessionId of lost)
      expect((await backend.waitForReport(sessionId, 15_000)).body).toMatchObject({ status: 'failed', reason: 'worker_lost' });
    await waitFor(async () => (await redis.smembers(`{${prefix}}:pods`)).every((p) => !p.startsWith(victimPod)), {
      timeoutMs: 10_000,
      what: 'the dead pod to be reaped',
    });

    await Promise.all(workers.map((w) => waitIdleSlots(w, SLOTS_PER_POD, 20_000)));
    const after = await burst(10);
    const ok = after.answers.filter((a) => a.status === 200);
    expect(ok).toHaveLength((PODS - 1) * SLOTS_PER_POD);
    expect(after.slots.filter((s) => s?.startsWith(victimPod))).toEqual([]);
  }, 60_000);
});
