import { randomBytes } from 'node:crypto';
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
 * No finished interview is lost: a report outlives a backend outage longer than the in-process
 * retries and a worker kill -9 in between (durable outbox in Redis), is sent with the session's
 * own report token whatever the worker token became (C1), a container restarted under the same
 * POD_NAME has its dead incarnation's session reaped and retryable, and a Redis wipe mid-interview
 * leaves no key without a TTL. Its own Redis: one test wipes it.
 */
let redisServer: RedisServer;
let redis: Redis;
let openai: FakeOpenAI;
let backend: FakeBackend;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  [redisServer, openai, backend] = await Promise.all([startRedis(), startFakeOpenAI({ voice: 'tone' }), startFakeBackend()]);
  redis = new Redis(redisServer.url);
});

afterAll(async () => {
  if (process.env.DEBUG_WORKER) for (const w of workers) console.log(w.logs.join('').slice(-4000));
  await Promise.all(workers.map((w) => w.stop()));
  redis?.disconnect();
  await Promise.all([openai?.close(), backend?.close(), redisServer?.stop()]);
});

async function worker(prefix: string, extra: Record<string, string> = {}): Promise<WorkerProcess> {
  const w = await startWorkerProcess(
    baseEnv({
      redisUrl: redisServer.url,
      backendUrl: backend.url,
      llmUrl: openai.url,
      REDIS_KEY_PREFIX: prefix,
      WARM_POOL_SIZE: '1',
      REPORT_ATTEMPTS: '2',
      REPORT_TIMEOUT_MS: '1000',
      OUTCOME_RETRY_MAX_SECONDS: '1',
      OUTCOME_OUTBOX_POLL_MS: '300',
      JOIN_TIMEOUT_SECONDS: '30',
      IDLE_TIMEOUT_SECONDS: '30',
      ...extra,
    }),
  );
  workers.push(w);
  await w.waitReady();
  await waitIdleSlots(w, 1);
  return w;
}

const sessionState = (prefix: string, id: string) => redis.hget(`{${prefix}}:session:${id}`, 'state');

describe('outcome reports survive outages and restarts', () => {
  it('keeps the report through a long backend outage and a worker kill -9, then sends it with the session report token', async () => {
    const prefix = `outbox-${Date.now()}`;
    const first = await worker(prefix);
    const reportToken = randomBytes(32).toString('base64url');
    const body = spawnBody({ reportToken });
    const sessionId = String(body.sessionId);
    backend.requireToken(sessionId, reportToken);
    const spawned = await first.spawnSession(body);
    expect(spawned.status).toBe(200);

    await backend.pause();
    const done = await runRespondent(String(spawned.body.room_url), String(spawned.body.token)).done;
    expect(done.ended).toBe('completed');
    // Longer than the in-process retries (REPORT_ATTEMPTS=2): the outbox has tried several times.
    const itemKey = `{${prefix}}:outbox:item:${sessionId}`;
    await waitFor(async () => (JSON.parse((await redis.get(itemKey)) ?? '{"tries":0}') as { tries: number }).tries >= 4, {
      timeoutMs: 20_000,
      what: 'four failed deliveries',
    });
    expect(await redis.pttl(itemKey)).toBeGreaterThan(21_000_000); // kept until the 6 h deadline, and not forever
    expect(await redis.pttl(`{${prefix}}:outbox`)).toBeGreaterThan(0);
    await waitFor(async () => /^worker_outcome_backlog 1$/m.test(await first.metrics()), {
      timeoutMs: 5000,
      what: 'the backlog gauge at 1',
    });

    // The worker dies; its successor runs with another worker token (the spawn bearer rotated).
    await first.stop();
    const second = await worker(prefix, { WORKER_TOKEN: 'rotated-worker-token-0123456789abcdef' });
    await backend.resume();
    const report = await backend.waitForReport(sessionId, 20_000);
    expect(report.body.status).toBe('completed');
    expect(report.authorization).toBe(`Bearer ${reportToken}`);
    await waitFor(async () => (await redis.exists(itemKey)) === 0 && (await redis.zcard(`{${prefix}}:outbox`)) === 0, {
      timeoutMs: 5000,
      what: 'the outbox to empty',
    });
    await waitFor(async () => /^worker_outcome_backlog 0$/m.test(await second.metrics()), {
      timeoutMs: 5000,
      what: 'the backlog gauge at 0',
    });
    expect(backend.reports.filter((r) => r.sessionId === sessionId)).toHaveLength(1);
  }, 90_000);

  it('reaps the sessions of a dead incarnation restarted under the same POD_NAME; the retry gets a fresh room', async () => {
    const prefix = `incarnation-${Date.now()}`;
    const env = { POD_NAME: 'voice-worker-0' };
    const first = await worker(prefix, env);
    const body = spawnBody();
    const sessionId = String(body.sessionId);
    const spawned = await first.spawnSession(body);
    expect(spawned.status).toBe(200);
    const respondent = runRespondent(String(spawned.body.room_url), String(spawned.body.token), { onListening: () => 'silent' });
    const respondentGone = respondent.done.catch(() => null); // the room goes with its worker
    await waitFor(async () => (await sessionState(prefix, sessionId)) === 'running', { timeoutMs: 15_000, what: 'the session to run' });

    await first.stop(); // kill -9 of the whole container: worker and bots
    await respondentGone;
    const second = await worker(prefix, env);
    const lost = await backend.waitForReport(sessionId, 20_000);
    expect(lost.body).toMatchObject({ status: 'failed', reason: 'worker_lost' });
    expect(await sessionState(prefix, sessionId)).toBe('failed');

    const retry = await second.spawnSession(body);
    expect(retry.status).toBe(200);
    expect(retry.body.room_url).not.toBe(spawned.body.room_url);
    const done = await runRespondent(String(retry.body.room_url), String(retry.body.token)).done;
    expect(done.ended).toBe('completed');
    await waitFor(() => backend.reports.some((r) => r.sessionId === sessionId && r.body.status === 'completed'), {
      timeoutMs: 10_000,
      what: 'the completed report of the retry',
    });
  }, 90_000);

  it('writes no key without a TTL when Redis is wiped mid-interview, and the report still arrives', async () => {
    const prefix = `wipe-${Date.now()}`;
    const w = await worker(prefix);
    const body = spawnBody();
    const sessionId = String(body.sessionId);
    const spawned = await w.spawnSession(body);
    expect(spawned.status).toBe(200);
    let said = false;
    let heard = () => undefined as void;
    const listening = new Promise<void>((r) => (heard = r));
    const respondent = runRespondent(String(spawned.body.room_url), String(spawned.body.token), {
      onListening: () => {
        if (said) return 'answer';
        heard();
        return 'silent';
      },
    });
    await listening;
    expect(await sessionState(prefix, sessionId)).toBe('running');
    await redis.flushall();
    said = true;
    respondent.say('yes, I liked it');
    expect((await respondent.done).ended).toBe('completed');
    const report = await backend.waitForReport(sessionId, 15_000);
    expect(report.body.status).toBe('completed');
    const keys = [...(await redis.keys(`{${prefix}}:session:*`)), ...(await redis.keys(`{${prefix}}:outbox*`))];
    for (const key of keys) expect(await redis.pttl(key), key).not.toBe(-1);
    expect(await redis.exists(`{${prefix}}:session:${sessionId}`)).toBe(0);
  }, 60_000);
});
