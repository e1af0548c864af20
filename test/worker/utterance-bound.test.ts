import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { speechPcm, tonePcm } from '../fakes/audio.ts';
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
 * (The flood is a pure tone, which Silero rightly does not take for speech: this test uses the
 * energy VAD, for which any loud audio is a turn.)
 * A respondent who sends loud audio far faster than real time: the turn ends at
 * MAX_UTTERANCE_SECONDS of audio (the bot keeps no more than that), the interview goes on, and
 * the bot process that held the flood is recycled after the session, so its memory goes back.
 */
let openai: FakeOpenAI;
let backend: FakeBackend;
let worker: WorkerProcess;
/** The default pipeline (Silero VAD, Smart Turn, realtime text), whose VAD is slower than a flood. */
let defaults: WorkerProcess;

beforeAll(async () => {
  [openai, backend] = await Promise.all([startFakeOpenAI({ voice: 'tone' }), startFakeBackend()]);
  const env = {
    redisUrl: inject('redisUrl'),
    backendUrl: backend.url,
    llmUrl: openai.url,
    WARM_POOL_SIZE: '1',
    IDLE_TIMEOUT_SECONDS: '20',
  };
  [worker, defaults] = await Promise.all([
    startWorkerProcess(baseEnv({ ...env, REDIS_KEY_PREFIX: `flood-${Date.now()}`, MAX_UTTERANCE_SECONDS: '3', VAD_ENGINE: 'energy' })),
    startWorkerProcess(baseEnv({ ...env, REDIS_KEY_PREFIX: `flood-speech-${Date.now()}` })),
  ]);
  await Promise.all([worker.waitReady(), defaults.waitReady()]);
  await Promise.all([waitIdleSlots(worker, 1), waitIdleSlots(defaults, 1, 60_000)]);
});

afterAll(async () => {
  await Promise.all([worker?.stop(), defaults?.stop()]);
  await Promise.all([openai?.close(), backend?.close()]);
});

const rssMiB = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

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
    await waitFor(async () => /worker_bot_restarts_total\{reason="recycled"\} 1/.test(await worker.metrics()), {
      timeoutMs: 15_000,
      what: 'the bot to be recycled',
    });
    await waitIdleSlots(worker, 1, 15_000);
    const [botAfter] = worker.botPids();
    expect(botAfter).toBeDefined();
    expect(botAfter).not.toBe(botBefore);
  }, 90_000);

  it("keeps a bot's memory bounded while a flood of speech lasts, and hears the next answer soon after it", async () => {
    // Issue 19: 256 KB messages of looped speech as fast as the socket takes them took a bot from
    // 179 to 1,155 MB in 30 s, because audio waited, unbounded, for a VAD slower than the flood.
    const [bot] = defaults.botPids();
    expect(bot).toBeDefined();
    const body = spawnBody();
    const spawned = await defaults.spawnSession(body);
    expect(spawned.status).toBe(200);
    const speech = speechPcm('I liked the onboarding a lot, and the support team answered every question I had.', 16_000);
    const message = Buffer.alloc(256 * 1024);
    for (let i = 0; i < message.length; i += speech.length) speech.copy(message, i, 0, Math.min(speech.length, message.length - i));
    const before = rssMiB(bot!);
    let floodStarted = 0;
    let floodEnded = 0;
    // RSS while the flood lasts, per half: a bounded bot grows once (the heap takes the bound's worth
    // and the garbage collector's slack, more under load) and then stays level; an unbounded one keeps
    // growing with the flood (on main about 20 MiB a second).
    const peaks = { first: before, second: before };
    const respondent = runRespondent(String(spawned.body.room_url), String(spawned.body.token), {
      onListening: (turn) => {
        if (turn !== 1) return 'answer';
        floodStarted = Date.now();
        const until = floodStarted + 12_000;
        const pump = (): void => {
          // The flood ends after 12 s, or sooner when the interview does (a fast bot hears the bounded
          // answer, asks on and finishes while the flood still runs).
          if (respondent.socket.readyState !== respondent.socket.OPEN || Date.now() > until) return void (floodEnded = Date.now());
          while (respondent.socket.bufferedAmount < 1024 * 1024) respondent.socket.send(message);
          setImmediate(pump);
        };
        pump();
        return 'silent';
      },
    });
    const sampler = setInterval(() => {
      if (!floodStarted || floodEnded) return;
      const half = Date.now() - floodStarted < 6000 ? 'first' : 'second';
      peaks[half] = Math.max(peaks[half], rssMiB(bot!));
    }, 250);
    const done = await respondent.done.finally(() => clearInterval(sampler));
    expect(done.ended, JSON.stringify(done.messages.slice(-6))).toBe('completed');
    expect(floodEnded).toBeGreaterThan(0);
    // Bounded: the bot holds at most one utterance waiting to be heard (on main it grew about
    // 17 MB a second of flood, and went on for a minute after it, working through the backlog).
    // The exact bound is the listener's unit test; here, the level: the second half of the flood
    // adds less than 60 MiB to the first half's peak (main: over 100), and the whole stays sane.
    const growth = `RSS ${before.toFixed(0)} -> ${peaks.first.toFixed(0)} (first 6 s) -> ${peaks.second.toFixed(0)} MiB (last 6 s)`;
    expect(peaks.second - peaks.first, growth).toBeLessThan(60);
    expect(Math.max(peaks.first, peaks.second) - before, growth).toBeLessThan(300);
    expect(Date.now() - floodEnded).toBeLessThan(30_000);
  }, 120_000);
});
