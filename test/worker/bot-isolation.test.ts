import { readdirSync, readFileSync } from 'node:fs';
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
import { firstListening, runRespondent } from './respondent.ts';

/**
 * The isolation bound of several sessions per bot process (BOT_SESSIONS_PER_PROCESS, issue 22): a
 * worker with 4 slots in 2 bot processes runs 4 live interviews; one process is killed mid-interview.
 * Exactly the 2 sessions it hosted are reported failed (`bot_crashed`), each with its own report;
 * the other 2 go on and complete; the killed process is replaced and its 2 slots come back.
 */
const SLOTS = 4;
const PER_PROCESS = 2;
const prefix = `isolation-${Date.now()}`;
let openai: FakeOpenAI;
let backend: FakeBackend;
let worker: WorkerProcess;
let redis: Redis;

beforeAll(async () => {
  [openai, backend] = await Promise.all([startFakeOpenAI(), startFakeBackend()]);
  redis = new Redis(inject('redisUrl'));
  worker = await startWorkerProcess(
    baseEnv({
      redisUrl: inject('redisUrl'),
      backendUrl: backend.url,
      llmUrl: openai.url,
      REDIS_KEY_PREFIX: prefix,
      WARM_POOL_SIZE: String(SLOTS),
      BOT_SESSIONS_PER_PROCESS: String(PER_PROCESS),
      // The turn models in threads of their own (off by default): the kill below takes them too.
      TURN_MODEL_THREAD: 'true',
      // The respondents stay silent at their first question until the kill: no idle timeout meanwhile.
      IDLE_TIMEOUT_SECONDS: '120',
    }),
  );
  await worker.waitReady();
  await waitIdleSlots(worker, SLOTS);
});

afterAll(async () => {
  if (process.env.DEBUG_WORKER) console.log(worker?.logs.join(''));
  await worker?.stop();
  redis?.disconnect();
  await Promise.all([openai?.close(), backend?.close()]);
});

/** The slot ids each bot process hosts, from its environment (BOT_SLOT_ID: the slots, comma-separated). */
function slotsByPid(): Map<number, string[]> {
  return new Map(
    worker.botPids().map((pid) => {
      const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      const slots = env.find((e) => e.startsWith('BOT_SLOT_ID='))?.slice('BOT_SLOT_ID='.length) ?? '';
      return [pid, slots.split(',')];
    }),
  );
}

/** The OS names of a process's threads. */
function threadNames(pid: number): string[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim());
}

describe('several sessions per bot process', () => {
  it('runs them in fewer processes, and a process killed mid-interview fails only the sessions it hosted', async () => {
    const hosts = slotsByPid();
    expect([...hosts.values()].map((slots) => slots.length)).toEqual([PER_PROCESS, PER_PROCESS]);
    // The turn models run in threads of their own, shared by the process's sessions.
    for (const pid of hosts.keys()) expect(threadNames(pid)).toEqual(expect.arrayContaining(['silero-vad', 'smart-turn']));

    const bodies = Array.from({ length: SLOTS }, () => spawnBody());
    const answers = await Promise.all(bodies.map((b) => worker.spawnSession(b)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    // Silent at the first question: each interview stays live until told to answer.
    const respondents = answers.map((a) =>
      runRespondent(String(a.body.room_url), String(a.body.token), { onListening: (turn) => (turn === 1 ? 'silent' : 'answer') }),
    );
    await Promise.all(respondents.map(firstListening));

    const slotOf = await Promise.all(bodies.map(async (b) => (await redis.hget(`{${prefix}}:session:${String(b.sessionId)}`, 'slot'))!));
    const [victim, victimSlots] = [...hosts.entries()][0]!;
    const doomed = bodies.map((b, i) => ({ sessionId: String(b.sessionId), i })).filter(({ i }) => victimSlots.includes(slotOf[i]!));
    const others = bodies.map((b, i) => ({ sessionId: String(b.sessionId), i })).filter(({ i }) => !victimSlots.includes(slotOf[i]!));
    expect(doomed).toHaveLength(PER_PROCESS);

    process.kill(victim, 'SIGKILL');
    for (const { sessionId } of doomed) {
      expect((await backend.waitForReport(sessionId, 15_000)).body).toMatchObject({ status: 'failed', reason: 'bot_crashed' });
    }
    // The interviews of the other process go on: they answer now and finish.
    for (const { i } of others) respondents[i]!.say('yes, I liked it');
    for (const { sessionId } of others) {
      expect((await backend.waitForReport(sessionId, 30_000)).body).toMatchObject({ status: 'completed' });
    }
    expect(
      backend.reports
        .filter((r) => bodies.some((b) => b.sessionId === r.sessionId))
        .map((r) => r.sessionId)
        .sort(),
    ).toEqual(bodies.map((b) => String(b.sessionId)).sort());
    await Promise.all(respondents.map((r) => r.done));

    // One restart, counted once for the process (not once per session), and all four slots warm again.
    await waitFor(async () => /worker_bot_restarts_total\{reason="SIGKILL"\} 1$/m.test(await worker.metrics()), {
      timeoutMs: 10_000,
      what: 'the killed bot to be counted once',
    });
    await waitIdleSlots(worker, SLOTS, 30_000);
    expect(slotsByPid().size).toBe(SLOTS / PER_PROCESS);
  }, 90_000);
});
