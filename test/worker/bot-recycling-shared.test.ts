import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { tonePcm } from '../fakes/audio.ts';
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
 * Recycling a bot process that hosts several sessions (BOT_SESSIONS_PER_PROCESS, issue 22). A session
 * that held a flood of audio asks for its process to be recycled; with two sessions per process the
 * other one is still live then. The process keeps it to its end, takes no new session meanwhile (a
 * spawn finds no room rather than a process about to exit), and only then is replaced, once.
 * (The flood is a tone, so this worker uses the energy VAD, for which any loud audio is a turn, as in
 * utterance-bound.test.ts.)
 */
const prefix = `recycle-shared-${Date.now()}`;
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
      REDIS_KEY_PREFIX: prefix,
      WARM_POOL_SIZE: '2',
      BOT_SESSIONS_PER_PROCESS: '2',
      MAX_UTTERANCE_SECONDS: '3',
      VAD_ENGINE: 'energy',
      // The second respondent stays silent at its first question until the first interview is over.
      IDLE_TIMEOUT_SECONDS: '120',
    }),
  );
  await worker.waitReady();
  await waitIdleSlots(worker, 2);
});

afterAll(async () => {
  if (process.env.DEBUG_WORKER) console.log(worker?.logs.join(''));
  await worker?.stop();
  await Promise.all([openai?.close(), backend?.close()]);
});

describe('recycling a bot process of several sessions', () => {
  it("keeps the process's other live interview to its end, gives it no new session, then replaces it once", async () => {
    const [bot, ...more] = worker.botPids();
    expect(more, 'two slots in one process').toEqual([]);

    const [flooded, calm] = [spawnBody(), spawnBody()];
    const spawned = [await worker.spawnSession(flooded), await worker.spawnSession(calm)];
    expect(spawned.map((s) => s.status)).toEqual([200, 200]);

    // The calm respondent is silent at its first question: its interview stays live meanwhile.
    const calmRespondent = runRespondent(String(spawned[1]!.body.room_url), String(spawned[1]!.body.token), {
      onListening: (turn) => (turn === 1 ? 'silent' : 'answer'),
    });
    await firstListening(calmRespondent);

    // 16 MB of full-scale tone as fast as the socket takes it: past the utterance bound, so the
    // session asks for its process to be recycled after it.
    const loud = tonePcm(2048, 16_000, 440, 0.95);
    const floodRespondent = runRespondent(String(spawned[0]!.body.room_url), String(spawned[0]!.body.token), {
      onListening: (turn) => {
        if (turn !== 1) return 'answer';
        for (let sent = 0; sent < 16 * 1024 * 1024; sent += loud.length) floodRespondent.socket.send(loud);
        return 'silent';
      },
    });
    expect((await floodRespondent.done).ended).toBe('completed');
    expect((await backend.waitForReport(String(flooded.sessionId), 10_000)).body).toMatchObject({ status: 'completed' });

    // The process is still there for the calm interview, and the flooded session's slot is not
    // offered again: with both slots in that process, a new spawn finds no room.
    expect(worker.botPids()).toEqual([bot]);
    const refused = await worker.spawnSession(spawnBody());
    expect(refused.status, JSON.stringify(refused.body)).toBe(503);
    expect(refused.body).toMatchObject({ error: 'no_capacity' });
    expect(refused.headers['retry-after']).toBeDefined();
    expect(await worker.metrics()).not.toMatch(/worker_bot_restarts_total\{reason="recycled"\}/);

    // The calm interview goes on in the same process and completes.
    calmRespondent.say('yes, I liked it');
    expect((await backend.waitForReport(String(calm.sessionId), 30_000)).body).toMatchObject({ status: 'completed' });
    expect((await calmRespondent.done).ended).toBe('completed');

    // Then the process is retired and replaced, counted once, and both slots are warm again.
    await waitFor(async () => /worker_bot_restarts_total\{reason="recycled"\} 1$/m.test(await worker.metrics()), {
      timeoutMs: 15_000,
      what: 'the bot to be recycled once',
    });
    await waitIdleSlots(worker, 2, 30_000);
    const after = worker.botPids();
    expect(after).toHaveLength(1);
    expect(after[0]).not.toBe(bot);
  }, 120_000);
});
