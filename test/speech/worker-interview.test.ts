import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { silencePcm } from '../../lib/pcm.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-compatible.ts';
import { readWavPcm, speakWithPiper, SPEECH_RATE } from '../harness/speech.ts';
import { startSpeechServer, type SpeechServerHandle } from '../harness/speech-server.ts';
import { contentRecall, pooledRecall } from '../harness/word-recall.ts';
import {
  baseEnv,
  spawnBody,
  startFakeBackend,
  startWorkerProcess,
  waitIdleSlots,
  type FakeBackend,
  type WorkerProcess,
} from '../worker/harness.ts';
import { runRespondent, type Respondent } from '../worker/respondent.ts';

/**
 * A whole interview in the worker process over a local room, with self-hosted speech: the
 * respondent speaks with the Piper voice, the worker's speech-to-text (realtime, its default) and
 * text-to-speech go to the speech server (STT_BASE_URL, TTS_BASE_URL, its bearer token as the
 * keys), and only the language model stays the stand-in. The stored transcript must hold the
 * respondent's content words (recall >= 0.8): with the stand-in's placeholder transcription
 * ("answer 1 (2.3 s of audio)") it holds none of them.
 */
const ANSWERS = [
  'I heard about the product from a colleague at a conference in Berlin.',
  'The reports are clear, but exporting them to spreadsheets takes too long.',
];

let speech: SpeechServerHandle;
let openai: FakeOpenAI;
let backend: FakeBackend;
let worker: WorkerProcess;
const spoken: Buffer[] = [];

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'speech-interview-'));
  const speechStarted = startSpeechServer({}, join(dir, 'logs'));
  const jobs = ANSWERS.map((text, i) => ({ text, file: join(dir, `answer-${i}.wav`) }));
  speakWithPiper(jobs);
  for (const job of jobs) spoken.push(readWavPcm(job.file).pcm);
  [speech, openai, backend] = await Promise.all([speechStarted, startFakeOpenAI({ voice: 'tone' }), startFakeBackend()]);
  worker = await startWorkerProcess(
    baseEnv({
      redisUrl: inject('redisUrl'),
      backendUrl: backend.url,
      llmUrl: openai.url,
      STT_BASE_URL: speech.url,
      TTS_BASE_URL: speech.url,
      STT_API_KEY: speech.token,
      TTS_API_KEY: speech.token,
      REDIS_KEY_PREFIX: `speech-interview-${Date.now()}`,
      WARM_POOL_SIZE: '1',
      // Decoding on two busy cores can take seconds per answer: wide deadlines, not sleeps.
      PROVIDER_TIMEOUT_MS: '90000',
      IDLE_TIMEOUT_SECONDS: '120',
      JOIN_TIMEOUT_SECONDS: '60',
    }),
  );
  await worker.waitReady();
  await waitIdleSlots(worker, 1, 60_000);
}, 300_000);

afterAll(async () => {
  if (process.env.DEBUG_WORKER) console.log(worker?.logs.join(''));
  await worker?.stop();
  await Promise.all([speech?.stop(), openai?.close(), backend?.close()]);
});

describe('an interview with self-hosted speech', () => {
  it('stores what the respondent said (Piper voice, recognised by the speech server), and the bot speaks with the Piper voice', async () => {
    const body = spawnBody({}, 2);
    const spawned = await worker.spawnSession(body);
    expect(spawned.status).toBe(200);
    const respondent: Respondent = runRespondent(String(spawned.body.room_url), String(spawned.body.token), {
      // Each listening turn is answered with the next Piper answer, then enough silence to end the turn.
      onListening: (turn) => {
        const pcm = spoken[Math.min(turn - 1, spoken.length - 1)]!;
        void respondent.send(Buffer.concat([pcm, silencePcm(1500, SPEECH_RATE)]));
        return 'silent';
      },
    });
    const result = await respondent.done;
    expect(result.ended).toBe('completed');

    const report = await backend.waitForReport(String(body.sessionId), 60_000);
    expect(report.body.status).toBe('completed');
    const transcript = JSON.parse(readFileSync(fileURLToPath(report.body.response!.transcriptKey), 'utf8')) as {
      turns: Array<{ speaker: string; text: string }>;
    };
    const heard = transcript.turns.filter((t) => t.speaker === 'respondent').map((t) => t.text);
    expect(heard.length, JSON.stringify(heard)).toBeGreaterThanOrEqual(ANSWERS.length);
    const pairs = ANSWERS.map((expected, i) => ({ expected, heard: heard[i] ?? '' }));
    expect(pooledRecall(pairs), JSON.stringify(pairs)).toBeGreaterThanOrEqual(0.8);
    for (const pair of pairs) expect(contentRecall(pair.expected, pair.heard), JSON.stringify(pair)).toBeGreaterThanOrEqual(0.6);

    // The words came from the speech server's recogniser, and the bot's voice from its Piper voice.
    expect(openai.requests.filter((r) => r.endpoint === 'stt' || r.endpoint === 'stt-stream')).toHaveLength(0);
    expect(openai.requests.filter((r) => r.endpoint === 'tts')).toHaveLength(0);
    expect(await speech.metric('speech_requests_total', { endpoint: 'realtime', outcome: 'ok' })).toBeGreaterThanOrEqual(ANSWERS.length);
    const botUtterances = result.messages.filter((m) => m.type === 'audio_end').length;
    expect(botUtterances).toBeGreaterThanOrEqual(3);
    expect(await speech.metric('speech_requests_total', { endpoint: 'speech', outcome: 'ok' })).toBeGreaterThanOrEqual(botUtterances);
    expect(result.audioBytes).toBeGreaterThan(24_000 * 2 * 1);
  }, 600_000);
});
