import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { hasEspeak, speechPcm, tonePcm } from '../fakes/audio.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-compatible.ts';
import { runLiveKitRespondent } from '../harness/livekit-respondent.ts';
import { startLiveKitServer, type LiveKitServer } from '../harness/livekit-server.ts';
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
 * Two LiveKit interviews at once in one bot process (BOT_SESSIONS_PER_PROCESS=2): one rtc-node
 * runtime holds both rooms, one copy of the turn models serves both listeners, and each respondent
 * hears only its own interview.
 */
let livekit: LiveKitServer;
let openai: FakeOpenAI;
let backend: FakeBackend;
let worker: WorkerProcess;

const say = (text: string): Buffer => (hasEspeak() ? speechPcm(text, 16_000) : tonePcm(800, 16_000));

beforeAll(async () => {
  [livekit, openai, backend] = await Promise.all([startLiveKitServer(), startFakeOpenAI(), startFakeBackend()]);
  worker = await startWorkerProcess(
    baseEnv({
      redisUrl: inject('redisUrl'),
      backendUrl: backend.url,
      llmUrl: openai.url,
      REDIS_KEY_PREFIX: `livekit-shared-${Date.now()}`,
      WARM_POOL_SIZE: '2',
      BOT_SESSIONS_PER_PROCESS: '2',
      IDLE_TIMEOUT_SECONDS: '15',
      VAD_SILENCE_MS: '500',
      ...livekit.env,
    }),
  );
  await worker.waitReady();
  await waitIdleSlots(worker, 2);
});

afterAll(async () => {
  if (process.env.DEBUG_WORKER) console.log(worker?.logs.join(''), livekit?.output());
  await worker?.stop();
  await Promise.all([openai?.close(), backend?.close(), livekit?.stop()]);
});

describe('two LiveKit interviews in one bot process', () => {
  it('runs both to completion at once, each respondent hearing only its own interview', async () => {
    expect(worker.botPids()).toHaveLength(1);
    const interview = (tag: string) => ({
      title: tag,
      language: 'en',
      intro: `Hello from ${tag}.`,
      questions: [{ id: 'q1', text: `What about ${tag}?`, maxFollowUps: 0 }],
      closing: `Bye from ${tag}.`,
    });
    const bodies = ['alpha', 'beta'].map((tag) => spawnBody({ interview: interview(tag) }));
    const spawned = await Promise.all(bodies.map((b) => worker.spawnSession(b)));
    expect(spawned.map((s) => s.status)).toEqual([200, 200]);
    const [alpha, beta] = await Promise.all(
      spawned.map((s, i) =>
        runLiveKitRespondent({
          url: String(s.body.room_url),
          token: String(s.body.token),
          answers: [say(i === 0 ? 'the first team liked it' : 'the second team did not')],
          timeoutMs: 90_000,
        }),
      ),
    );
    for (const [result, tag] of [
      [alpha!, 'alpha'],
      [beta!, 'beta'],
    ] as const) {
      expect(result.ended).toBe('completed');
      expect(result.messages.filter((m) => m.type === 'caption' && m.speaker === 'bot').map((m) => m.text)).toEqual([
        `Hello from ${tag}.`,
        `What about ${tag}?`,
        `Bye from ${tag}.`,
      ]);
      expect(result.heardMs).toBeGreaterThan(500);
    }
    for (const body of bodies)
      expect((await backend.waitForReport(String(body.sessionId), 15_000)).body).toMatchObject({ status: 'completed' });
    // Still the one process, and both slots warm again.
    await waitIdleSlots(worker, 2, 30_000);
    expect(worker.botPids()).toHaveLength(1);
  }, 120_000);
});
