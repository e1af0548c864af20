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
 * How sessions end when things go wrong: a killed bot (the other session carries on), provider
 * errors and timeouts (failed, reported, never hung), a respondent who hangs up or says nothing.
 */
let openai: FakeOpenAI;
let backend: FakeBackend;
let worker: WorkerProcess;

beforeAll(async () => {
  [openai, backend] = await Promise.all([startFakeOpenAI({ voice: 'tone' }), startFakeBackend()]);
  worker = await startWorkerProcess(
    baseEnv({
      redisUrl: inject('redisUrl'),
      backendUrl: backend.url,
      llmUrl: openai.url,
      REDIS_KEY_PREFIX: `sessions-${Date.now()}`,
      WARM_POOL_SIZE: '2',
      PROVIDER_TIMEOUT_MS: '800',
      IDLE_TIMEOUT_SECONDS: '2',
    }),
  );
  await worker.waitReady();
  await waitIdleSlots(worker, 2);
});

afterAll(async () => {
  if (process.env.DEBUG_WORKER) console.log(worker?.logs.join(''), JSON.stringify(backend.reports, null, 1));
  await worker?.stop();
  await Promise.all([openai?.close(), backend?.close()]);
});

async function start(questions = 1) {
  const body = spawnBody({}, questions);
  const res = await worker.spawnSession(body);
  expect(res.status).toBe(200);
  return { sessionId: String(body.sessionId), roomUrl: String(res.body.room_url), token: String(res.body.token) };
}

describe('crash isolation', () => {
  it('a killed bot fails its own session only; the other session completes; the slot comes back', async () => {
    const a = await start();
    const b = await start();
    let listeningA = false;
    let listeningB = false;
    const ra = runRespondent(a.roomUrl, a.token, { onListening: () => ((listeningA = true), 'silent') });
    const rb = runRespondent(b.roomUrl, b.token, { onListening: () => ((listeningB = true), 'silent') });
    await waitFor(() => listeningA && listeningB, { timeoutMs: 10_000, what: 'both bots listening' });
    const pids = worker.botPids();
    expect(pids).toHaveLength(2);
    process.kill(pids[0]!, 'SIGKILL');
    // Exactly one room closes with a fault; the other keeps listening and finishes when spoken to.
    const first = await Promise.race([ra.done.then((r) => ({ who: 'a', r })), rb.done.then((r) => ({ who: 'b', r }))]);
    expect(first.r.ended).toBe('failed');
    expect(first.r.closeCode).toBe(1011);
    const crashed = first.who === 'a' ? a : b;
    const survivor = first.who === 'a' ? rb : ra;
    const survivorId = first.who === 'a' ? b.sessionId : a.sessionId;
    survivor.say('still here');
    const survived = await survivor.done;
    expect(survived.ended).toBe('completed');
    expect((await backend.waitForReport(crashed.sessionId, 5000)).body).toMatchObject({ status: 'failed', reason: 'bot_crashed' });
    expect((await backend.waitForReport(survivorId, 5000)).body.status).toBe('completed');
    await waitIdleSlots(worker, 2);
    expect(worker.botPids()).toHaveLength(2);
    expect(await worker.metrics()).toMatch(/worker_bot_restarts_total\{reason="SIGKILL"\} 1/);
  }, 40_000);
});

describe('provider failures end the session as failed, reported', () => {
  it('a language model that keeps answering 500 gives llm_error after our one retry', async () => {
    openai.failNext('chat', { status: 500, count: 2 });
    const s = await start();
    const before = openai.hits.chat;
    const r = await runRespondent(s.roomUrl, s.token).done;
    expect(r.ended).toBe('failed');
    expect((await backend.waitForReport(s.sessionId, 5000)).body).toMatchObject({ status: 'failed', reason: 'llm_error' });
    // PROVIDER_RETRIES=1: two attempts, then the session ends (no summary call either).
    expect(openai.hits.chat - before).toBe(2);
    await waitIdleSlots(worker, 2);
  }, 20_000);

  it('a text-to-speech that never answers gives tts_timeout within the deadlines', async () => {
    openai.failNext('tts', { hang: true, count: 2 });
    const s = await start();
    const before = openai.hits.tts;
    const t0 = Date.now();
    const r = await runRespondent(s.roomUrl, s.token).done;
    expect(r.ended).toBe('failed');
    expect(Date.now() - t0).toBeLessThan(5000); // two attempts of 800 ms plus backoff
    const report = await backend.waitForReport(s.sessionId, 5000);
    expect(report.body).toMatchObject({ status: 'failed', reason: 'tts_timeout' });
    expect(report.body.message).toMatch(/did not answer within 0.8 s/);
    expect(openai.hits.tts - before).toBe(2);
    await waitIdleSlots(worker, 2);
  }, 20_000);
});

describe('respondent behaviour', () => {
  it('a hang-up ends the session as failed with respondent_hangup', async () => {
    const s = await start();
    const r = await runRespondent(s.roomUrl, s.token, { onListening: () => 'hangup' }).done;
    expect(r.ended).toBe('hangup');
    expect((await backend.waitForReport(s.sessionId, 5000)).body).toMatchObject({ status: 'failed', reason: 'respondent_hangup' });
  });

  it('silence past IDLE_TIMEOUT_SECONDS ends the session with idle_timeout', async () => {
    const s = await start();
    const r = await runRespondent(s.roomUrl, s.token, { onListening: () => 'silent' }).done;
    expect(r.ended).toBe('timeout');
    expect((await backend.waitForReport(s.sessionId, 5000)).body).toMatchObject({ status: 'failed', reason: 'idle_timeout' });
  }, 15_000);

  it('refuses a wrong token with 4401 and an unknown room with 4404', async () => {
    const s = await start();
    const bad = await runRespondent(s.roomUrl, `${s.token.slice(0, -2)}xx`).done;
    expect(bad.closeCode).toBe(4401);
    const unknown = await runRespondent(s.roomUrl.replace(/rm_[^/]+$/, 'rm_nosuchroom'), s.token).done;
    expect(unknown.closeCode).toBe(4404);
    const ok = runRespondent(s.roomUrl, s.token, { onListening: () => 'hangup' });
    const twice = await runRespondent(s.roomUrl, s.token).done;
    expect(twice.closeCode).toBe(4409);
    expect((await ok.done).ended).toBe('hangup');
  }, 15_000);

  it('survives a respondent that sends an oversized or malformed frame (the socket closes, the worker lives)', async () => {
    const s = await start();
    const r = runRespondent(s.roomUrl, s.token, { onListening: () => 'silent' });
    await new Promise<void>((resolve) => r.socket.once('open', () => resolve()));
    r.socket.send(Buffer.alloc(512 * 1024)); // over the 256 KiB frame limit
    const result = await r.done;
    expect(result.closeCode).toBe(1009);
    expect((await backend.waitForReport(s.sessionId, 5000)).body).toMatchObject({ status: 'failed', reason: 'respondent_left' });
    expect(await worker.ready()).toBe(true);
    expect(worker.proc.exitCode).toBeNull();
  }, 15_000);
});

describe('MAX_SESSION_SECONDS', () => {
  it('ends a session that runs too long as failed with max_duration, however patient the respondent', async () => {
    const w = await startWorkerProcess(
      baseEnv({
        redisUrl: inject('redisUrl'),
        backendUrl: backend.url,
        llmUrl: openai.url,
        REDIS_KEY_PREFIX: `maxdur-${Date.now()}`,
        MAX_SESSION_SECONDS: '5',
        IDLE_TIMEOUT_SECONDS: '60',
      }),
    );
    try {
      await w.waitReady();
      await waitIdleSlots(w, 1);
      const body = spawnBody();
      const res = await w.spawnSession(body);
      const t0 = Date.now();
      const r = await runRespondent(String(res.body.room_url), String(res.body.token), { onListening: () => 'silent' }).done;
      expect(r.ended).toBe('timeout');
      expect(Date.now() - t0).toBeGreaterThan(4000);
      expect(Date.now() - t0).toBeLessThan(8000);
      expect((await backend.waitForReport(String(body.sessionId), 5000)).body).toMatchObject({ status: 'failed', reason: 'max_duration' });
    } finally {
      await w.stop();
    }
  }, 150_000);
});
