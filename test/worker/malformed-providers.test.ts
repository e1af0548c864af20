import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-compatible.ts';
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
 * Issue 19, fuzzed: whole interviews through a real worker whose model provider answers a seeded
 * share of its calls with malformed bodies and events (test/fakes/malformed.ts: fields missing,
 * of the wrong type, huge, out of order, not JSON) on every endpoint, realtime transcription
 * included. Each interview either goes on or ends with a clear reason; no bot process dies (a
 * malformed realtime event used to kill it with exit code 70). The seed is fixed: a failure
 * repeats when the file runs again.
 */
const SEED = 19;
const INTERVIEWS = 10;
/** Reasons an interview may end with when its provider misbehaves: named, never a crash. */
const CLEAR_REASON = /^(stt|llm|tts)_(error|timeout|stream_unavailable)$|^idle_timeout$/;

let openai: FakeOpenAI;
let backend: FakeBackend;
let worker: WorkerProcess;

beforeAll(async () => {
  [openai, backend] = await Promise.all([
    startFakeOpenAI({ voice: 'tone', malformed: { seed: SEED, rate: 0.1, rates: { 'stt-stream': 0.5 } } }),
    startFakeBackend(),
  ]);
  worker = await startWorkerProcess(
    baseEnv({
      redisUrl: inject('redisUrl'),
      backendUrl: backend.url,
      llmUrl: openai.url,
      REDIS_KEY_PREFIX: `malformed-${Date.now()}`,
      WARM_POOL_SIZE: '1',
      PROVIDER_TIMEOUT_MS: '1500',
      JOIN_TIMEOUT_SECONDS: '30',
    }),
  );
  await worker.waitReady();
});

afterAll(async () => {
  if (process.env.DEBUG_WORKER) console.log(worker?.logs.join('').slice(-8000));
  await worker?.stop();
  await Promise.all([openai?.close(), backend?.close()]);
});

describe('property: malformed provider answers never crash a bot', () => {
  it(`${INTERVIEWS} interviews against a provider that sends malformed answers each end completed or failed with a clear reason`, async () => {
    const outcomes: string[] = [];
    // One after another: the fake's seeded choices then fall on the same calls on every run.
    for (let i = 0; i < INTERVIEWS; i++) {
      await waitIdleSlots(worker, 1, 20_000);
      const body = spawnBody({}, 2);
      const res = await worker.spawnSession(body);
      expect(res.status).toBe(200);
      const done = await runRespondent(String(res.body.room_url), String(res.body.token)).done;
      const report = await backend.waitForReport(String(body.sessionId), 20_000);
      expect(['completed', 'failed']).toContain(report.body.status);
      if (report.body.status === 'failed') {
        expect(report.body.reason, JSON.stringify(report.body)).toMatch(CLEAR_REASON);
        expect(report.body.message).toMatch(/\w{3,}/);
      }
      // The respondent's page is told the interview ended (completed, or why not).
      expect(done.ended, JSON.stringify(report.body)).not.toBeNull();
      outcomes.push(report.body.status === 'failed' ? report.body.reason! : 'completed');
    }
    // The faults were really there, and not every interview failed because of them.
    const faulty = openai.requests.length;
    expect(faulty).toBeGreaterThan(INTERVIEWS);
    expect(outcomes, outcomes.join(', ')).toContain('completed');
    expect(
      outcomes.some((o) => o !== 'completed'),
      outcomes.join(', '),
    ).toBe(true);
    // No bot process ended on its own: a crash would be counted as a restart with its exit code.
    const metrics = await worker.metrics();
    expect(metrics, worker.logs.join('').slice(-3000)).not.toMatch(/worker_bot_restarts_total\{reason="exit_\d+"\}/);
    expect(worker.logs.join('')).not.toMatch(/bot process exited; starting a new one/);
    expect(worker.proc.exitCode).toBeNull();
  }, 240_000);
});
