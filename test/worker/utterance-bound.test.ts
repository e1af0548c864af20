import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { tonePcm } from '../fakes/audio.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-compatible.ts';
import { waitFor } from '../harness/ports.ts';
import { baseEnv, spawnBody, startFakeBackend, startWorkerProcess, waitIdleSlots, type FakeBackend, type WorkerProcess } from './harness.ts';
import { runRespondent } from './respondent.ts';

/**
 * (The flood is a pure tone, which Silero rightly does not take for speech: this test uses the
 * energy VAD, for which any loud audio is a turn.)
 * A respondent who sends loud audio far faster than real time: the turn ends at
 * MAX_UTTERANCE_SECONDS of audio (the bot keeps no more than that), the interview goes on, and
 * the bot process that held the flood is recycled after the session, so its memory goes back.
 */
let openai: FakeOpenAI;
let backend: FakeBackend;
let worker: WorkerProcess;

beforeAll(async () => {
  [openai, backend] = await Promise.all([startFakeOpenAI({ voice: 'tone' }), startFakeBackend()]);
  worker = await startWorkerProcess(baseEnv({ redisUrl: inject('redisUrl'), backendUrl: backend.url, llmUrl: openai.url, REDIS_KEY_PREFIX: `flood-${Date.now()}`, WARM_POOL_SIZE: '1', MAX_UTTERANCE_SECONDS: '3', IDLE_TIMEOUT_SECONDS: '20', VAD_ENGINE: 'energy' }));
  await worker.waitReady();
  await waitIdleSlots(worker, 1);
});

afterAll(async () => {
  await worker?.stop();
  await Promise.all([openai?.close(), backend?.close()]);
});

describe('one utterance is bounded', () => {
  it('ends a flooded turn at the byte bound, completes the interview and recycles the bot', async () => {
    const [botBefore] = worker.botPids();
    expect(botBefore).toBeDefined();
    const body = spawnBody();
    const spawned = await worker.spawnSession(body);
    expect(spawned.status).toBe(200);
    // 16 MB of full-scale tone (about 500 s of audio) in 64 KiB frames, as fast as the socket takes it.
    const loud = tonePcm(2048, 16_000, 440, 0.95);
    const respondent = runRespondent(String(spawned.body.room_url), String(spawned.body.token), {
      onListening: (turn) => {
        if (turn !== 1) return 'answer';
        for (let sent = 0; sent < 16 * 1024 * 1024; sent += loud.length) respondent.socket.send(loud);
        return 'silent';
      },
    });
    const done = await respondent.done;
    const report = await backend.waitForReport(String(body.sessionId), 10_000);
    expect(done.ended, JSON.stringify({ report: report.body, messages: done.messages.slice(-6) })).toBe('completed');
    expect(report.body.status).toBe('completed');
    // The flooded answer reached speech-to-text as at most MAX_UTTERANCE_SECONDS of audio.
    const firstUpload = openai.requests.find((r) => r.endpoint === 'stt-stream');
    expect(firstUpload?.audioSeconds).toBeGreaterThan(1);
    expect(firstUpload?.audioSeconds).toBeLessThanOrEqual(3);
    await waitFor(async () => /worker_bot_restarts_total\{reason="recycled"\} 1/.test(await worker.metrics()), { timeoutMs: 15_000, what: 'the bot to be recycled' });
    await waitIdleSlots(worker, 1, 15_000);
    const [botAfter] = worker.botPids();
    expect(botAfter).toBeDefined();
    expect(botAfter).not.toBe(botBefore);
  }, 90_000);
});
