import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-compatible.ts';
import { createCertificateAuthority } from '../harness/pki.ts';
import { freePort, waitFor } from '../harness/ports.ts';
import { startRedis } from '../harness/redis.ts';
import { startSentinelGroup, type SentinelGroup } from '../harness/redis-sentinel.ts';
import {
  baseEnv,
  spawnBody,
  startFakeBackend,
  startWorkerProcess,
  waitIdleSlots,
  type FakeBackend,
  type WorkerProcess,
} from './harness.ts';
import { runRespondent, type Respondent } from './respondent.ts';

/**
 * The session store failing under live interviews, with real servers: a Sentinel failover (the
 * master killed, the replica promoted) and a 60 s outage of a single Redis. No live interview and
 * no outcome may be lost; spawns come back within 10 s of the failover; liveness never fails
 * because Redis is away (readiness does). And a Redis behind TLS with an ACL user. docs/worker.md,
 * "Session store".
 */
let openai: FakeOpenAI;
let backend: FakeBackend;

beforeAll(async () => {
  [openai, backend] = await Promise.all([startFakeOpenAI({ voice: 'tone' }), startFakeBackend()]);
});

afterAll(async () => {
  await Promise.all([openai?.close(), backend?.close()]);
});

/** A respondent who joins, stays silent at the first question and answers when told to. */
function liveRespondent(spawned: { body: Record<string, unknown> }): { respondent: Respondent; listening: Promise<void> } {
  let heard!: () => void;
  const listening = new Promise<void>((resolve) => (heard = resolve));
  const respondent = runRespondent(String(spawned.body.room_url), String(spawned.body.token), {
    onListening: (turn) => (turn === 1 ? (heard(), 'silent') : 'answer'),
  });
  return { respondent, listening };
}

describe('Redis Sentinel failover', () => {
  let group: SentinelGroup;
  let worker: WorkerProcess;

  beforeAll(async () => {
    group = await startSentinelGroup();
    worker = await startWorkerProcess(
      baseEnv({
        // With Sentinel the URL's host is not used: the Sentinels name the master.
        redisUrl: 'redis://unused.invalid:6379',
        backendUrl: backend.url,
        llmUrl: openai.url,
        REDIS_SENTINELS: group.sentinels,
        REDIS_SENTINEL_MASTER: group.masterName,
        WARM_POOL_SIZE: '3',
        IDLE_TIMEOUT_SECONDS: '90',
        JOIN_TIMEOUT_SECONDS: '60',
        SPAWN_BUDGET_MS: '500',
      }),
    );
    await worker.waitReady();
    await waitIdleSlots(worker, 3);
  }, 180_000);

  afterAll(async () => {
    if (process.env.DEBUG_WORKER) console.log(worker?.logs.join('').slice(-6000));
    await worker?.stop();
    await group?.stop();
  });

  it('loses no live interview, and spawns succeed again within 10 s of the master dying', async () => {
    const bodies = [spawnBody(), spawnBody()];
    const live = [];
    for (const body of bodies) {
      const spawned = await worker.spawnSession(body);
      expect(spawned.status).toBe(200);
      live.push(liveRespondent(spawned));
    }
    await Promise.all(live.map((l) => l.listening));

    const killedAt = Date.now();
    const { oldPort, newPort } = await group.killMaster();
    expect(newPort).not.toBe(oldPort);
    let spawnedAgainAfterMs = 0;
    await waitFor(
      async () => {
        const res = await worker.spawnSession(spawnBody());
        spawnedAgainAfterMs = Date.now() - killedAt;
        return res.status === 200;
      },
      { timeoutMs: 20_000, intervalMs: 200, what: 'a spawn to succeed after the failover' },
    );
    expect(spawnedAgainAfterMs).toBeLessThan(10_000);
    expect(await worker.healthz()).toBe(200);

    // Both interviews live through it: the respondents answer now and finish.
    for (const l of live) l.respondent.say('we moved everything to the new tool last spring');
    const results = await Promise.all(live.map((l) => l.respondent.done));
    expect(results.map((r) => r.ended)).toEqual(['completed', 'completed']);
    for (const body of bodies) {
      expect((await backend.waitForReport(String(body.sessionId), 10_000)).body.status).toBe('completed');
    }
  }, 90_000);
});

describe('a 60 s Redis outage', () => {
  it('keeps liveness, drops readiness, and loses no live interview and no outcome', async () => {
    const redis = await startRedis({ persistent: true });
    const worker = await startWorkerProcess(
      baseEnv({
        redisUrl: redis.url,
        backendUrl: backend.url,
        llmUrl: openai.url,
        REDIS_KEY_PREFIX: `outage60-${Date.now()}`,
        WARM_POOL_SIZE: '2',
        IDLE_TIMEOUT_SECONDS: '150',
        JOIN_TIMEOUT_SECONDS: '60',
        SPAWN_BUDGET_MS: '500',
      }),
    );
    try {
      await worker.waitReady();
      await waitIdleSlots(worker, 2);
      const during = spawnBody();
      const across = spawnBody();
      const a = liveRespondent(await worker.spawnSession(during));
      const b = liveRespondent(await worker.spawnSession(across));
      await Promise.all([a.listening, b.listening]);

      await redis.kill();
      const downAt = Date.now();
      await waitFor(async () => !(await worker.ready()), { timeoutMs: 5000, what: 'readiness to go false' });
      // One interview ends inside the outage: its outcome still reaches the service.
      a.respondent.say('mostly the onboarding, it was quick');
      expect((await a.respondent.done).ended).toBe('completed');
      expect((await backend.waitForReport(String(during.sessionId), 60_000)).body.status).toBe('completed');
      // Liveness answers through the whole outage.
      while (Date.now() - downAt < 60_000) {
        expect(await worker.healthz()).toBe(200);
        expect(await worker.ready()).toBe(false);
        await new Promise((resolve) => setTimeout(resolve, 2000));
      }

      await redis.start();
      await waitFor(() => worker.ready(), { timeoutMs: 10_000, what: 'readiness to come back' });
      // The other interview was live across the whole outage and the restart.
      b.respondent.say('we would keep the reports, they saved us time');
      expect((await b.respondent.done).ended).toBe('completed');
      expect((await backend.waitForReport(String(across.sessionId), 10_000)).body.status).toBe('completed');
      expect((await worker.spawnSession(spawnBody())).status).toBe(200);
    } finally {
      if (process.env.DEBUG_WORKER) console.log(worker.logs.join('').slice(-6000));
      await worker.stop();
      await redis.stop();
    }
  }, 270_000);
});

describe('a Redis with TLS and an ACL user', () => {
  it('is reached over rediss:// with a private CA and the user from REDIS_USERNAME/REDIS_PASSWORD; a wrong password is never logged', async () => {
    const ca = createCertificateAuthority('redis-test-ca');
    const serving = ca.issueServer('redis', ['127.0.0.1']);
    const tlsPort = await freePort();
    const password = 'acl-pass-0123456789';
    const redis = await startRedis({
      args: [
        '--tls-port',
        String(tlsPort),
        '--tls-cert-file',
        serving.certFile,
        '--tls-key-file',
        serving.keyFile,
        '--tls-ca-cert-file',
        ca.certFile,
        '--tls-auth-clients',
        'no',
        '--user',
        'default',
        'off',
        '--user',
        'voice-worker',
        'on',
        `>${password}`,
        '~*',
        '&*',
        '+@all',
      ],
    });
    const env = (pass: string) =>
      baseEnv({
        redisUrl: `rediss://127.0.0.1:${tlsPort}`,
        backendUrl: backend.url,
        llmUrl: openai.url,
        REDIS_KEY_PREFIX: `tls-${Date.now()}`,
        REDIS_TLS_CA_FILE: ca.certFile,
        REDIS_USERNAME: 'voice-worker',
        REDIS_PASSWORD: pass,
        WARM_POOL_SIZE: '1',
      });
    const good = await startWorkerProcess(env(password));
    const bad = await startWorkerProcess(env('wrong-password-9876543210'));
    try {
      await good.waitReady();
      await waitIdleSlots(good, 1);
      expect((await good.spawnSession(spawnBody())).status).toBe(200);
      // The other replica cannot log in: not ready, spawns refused, the password nowhere in its logs.
      // It is up first (its liveness answers; its public port opens before that one): "not ready"
      // must mean the login failed, not that the process had not listened yet (a loaded run once
      // got ECONNREFUSED from its public port here).
      await waitFor(async () => (await bad.healthz()) === 200, {
        timeoutMs: 30_000,
        what: `the replica with the wrong password to be live (logs: ${bad.logs.join('').slice(-1500)})`,
      });
      expect(await bad.ready()).toBe(false);
      const refused = await bad.spawnSession(spawnBody());
      expect(refused.status).toBe(503);
      expect(bad.logs.join('')).not.toContain('wrong-password-9876543210');
      expect(good.logs.join('')).not.toContain(password);
    } catch (err) {
      // Both replicas' own words, for a failure that is not an assertion (a refused connection).
      const tail = (w: WorkerProcess) => `exit ${w.proc.exitCode ?? w.proc.signalCode ?? 'none yet'}; ${w.logs.join('').slice(-1500)}`;
      throw new Error(`${(err as Error).message}\n--- good replica: ${tail(good)}\n--- wrong-password replica: ${tail(bad)}`, {
        cause: err,
      });
    } finally {
      await Promise.all([good.stop(), bad.stop()]);
      await redis.stop();
    }
  }, 180_000);
});
