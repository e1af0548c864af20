import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-compatible.ts';
import { startOtlpReceiver, type OtlpReceiver } from '../fakes/otlp-receiver.ts';
import { createCertificateAuthority } from '../harness/pki.ts';
import {
  baseEnv,
  spawnBody,
  startFakeBackend,
  startWorkerProcess,
  waitIdleSlots,
  WORKER_TOKEN,
  type FakeBackend,
  type WorkerProcess,
} from './harness.ts';
import { runRespondent } from './respondent.ts';

/**
 * A whole interview over a local room, behind TLS with a throwaway CA: the service's spawn, a
 * respondent that speaks (espeak-ng audio) and hears the bot, the model fakes, the transcript,
 * the outcome report, and the three spans at an OTLP receiver (default protobuf protocol).
 */
let openai: FakeOpenAI;
let otlp: OtlpReceiver;
let backend: FakeBackend;
let worker: WorkerProcess;
let ca: ReturnType<typeof createCertificateAuthority>;

beforeAll(async () => {
  [openai, otlp, backend] = await Promise.all([startFakeOpenAI(), startOtlpReceiver(), startFakeBackend()]);
  ca = createCertificateAuthority();
  const cert = ca.issueServer('worker', ['127.0.0.1', 'localhost']);
  worker = await startWorkerProcess(
    baseEnv({
      redisUrl: inject('redisUrl'),
      backendUrl: backend.url,
      llmUrl: openai.url,
      REDIS_KEY_PREFIX: `interview-${Date.now()}`,
      WARM_POOL_SIZE: '2',
      TLS_CERT_FILE: cert.certFile,
      TLS_KEY_FILE: cert.keyFile,
      NODE_EXTRA_CA_CERTS: ca.certFile,
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_SERVICE_NAME: 'voice-worker-test',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    }),
    { tls: true, caFile: ca.certFile },
  );
  await worker.waitReady();
  await waitIdleSlots(worker, 2);
});

afterAll(async () => {
  if (process.env.DEBUG_WORKER) console.log(worker?.logs.join(''));
  await worker?.stop();
  await Promise.all([openai?.close(), otlp?.close(), backend?.close()]);
});

describe('a full interview over a local room', () => {
  it('runs greeting, questions, a follow-up, closing; stores the transcript; reports; exports spans', async () => {
    openai.scriptLlm('FOLLOW_UP: What did you like most?', 'NEXT', 'The respondent liked the onboarding.');
    openai.scriptTranscripts('I heard about you from a friend.', 'The onboarding was smooth.', 'Fast support.');
    const body = spawnBody({}, 2);
    const spawned = await worker.spawnSession(body);
    expect(spawned.status).toBe(200);
    expect(String(spawned.body.room_url)).toMatch(/^wss:\/\/127\.0\.0\.1:\d+\/rooms\/rm_/);

    const respondent = runRespondent(String(spawned.body.room_url), String(spawned.body.token), {
      ca: readFileSync(ca.certFile),
      answers: ['I heard about you from a friend', 'it was smooth', 'fast support'],
    });
    const result = await respondent.done;

    expect(result.ended).toBe('completed');
    expect(result.closeCode).toBe(1000);
    expect(result.messages[0]).toMatchObject({ type: 'ready', sessionId: body.sessionId, inputSampleRate: 16000, outputSampleRate: 24000 });
    // Greeting, two questions, one follow-up, closing: five utterances, each with audio.
    const botCaptions = result.messages.filter((m) => m.type === 'caption' && m.speaker === 'bot').map((m) => m.text);
    expect(botCaptions).toEqual(['Hi.', 'Question 1?', 'What did you like most?', 'Question 2?', 'Thanks, bye.']);
    expect(result.messages.filter((m) => m.type === 'audio_end')).toHaveLength(5);
    expect(result.audioBytes).toBeGreaterThan(24_000 * 2 * 0.5);
    const respondentCaptions = result.messages.filter((m) => m.type === 'caption' && m.speaker === 'respondent').map((m) => m.text);
    expect(respondentCaptions).toEqual(['I heard about you from a friend.', 'The onboarding was smooth.', 'Fast support.']);
    // Real audio reached the speech-to-text fake: three turns of speech, each at least a fraction of a second.
    const stt = openai.requests.filter((r) => r.endpoint === 'stt-stream'); // realtime transcription, the default (STT_MODE)
    expect(stt).toHaveLength(3);
    for (const r of stt) expect(r.audioSeconds).toBeGreaterThan(0.3);
    expect(openai.requests.filter((r) => r.endpoint === 'tts').every((r) => r.responseFormat === 'pcm')).toBe(true);
    expect(openai.requests.every((r) => r.authorization === 'Bearer sk-test-fake-key-000000')).toBe(true);

    const report = await backend.waitForReport(String(body.sessionId), 10_000);
    expect(report.authorization).toBe(`Bearer ${WORKER_TOKEN}`);
    expect(report.body.status).toBe('completed');
    expect(report.body.response?.summary).toBe('The respondent liked the onboarding.');
    const key = report.body.response!.transcriptKey;
    expect(key).toMatch(/^file:\/\/.*inv_.*\.json$/);
    const transcript = JSON.parse(readFileSync(fileURLToPath(key), 'utf8')) as {
      turns: Array<{ speaker: string; text: string }>;
      summary: string;
    };
    expect(transcript.turns.filter((t) => t.speaker === 'respondent').map((t) => t.text)).toEqual(respondentCaptions);
    expect(transcript.summary).toBe('The respondent liked the onboarding.');

    const count = (name: string) => otlp.spans.filter((s) => s.name === name && s.attributes['session.id'] === body.sessionId).length;
    await otlp.waitFor(
      () => count('session.start') === 1 && count('llm.turn') === 3 && count('tts.first_byte') === 5,
      10_000,
      'the spans of the session',
    );
    const mine = otlp.spans.filter((s) => s.attributes['session.id'] === body.sessionId);
    const start = mine.find((s) => s.name === 'session.start')!;
    expect(start.resource['service.name']).toBe('voice-worker-test');
    expect(start.attributes['spawn.outcome']).toBe('ok');
    const llm = mine.filter((s) => s.name === 'llm.turn');
    expect(llm.map((s) => s.attributes['llm.purpose']).sort()).toEqual(['follow_up', 'follow_up', 'summary']);
    expect(llm[0]!.attributes['provider.model']).toBe('gpt-4o-mini');
    expect(String(llm[0]!.attributes['provider.name'])).toMatch(/^openai-compatible:127\.0\.0\.1/);
    const tts = mine.filter((s) => s.name === 'tts.first_byte');
    expect(tts).toHaveLength(5);
    expect(tts[0]!.attributes['provider.model']).toBe('tts-1');
    // Bot spans join the spawn's trace.
    expect(new Set(mine.map((s) => s.traceId)).size).toBe(1);
    expect(otlp.contentTypes.every((t) => t.includes('protobuf'))).toBe(true);
    // No respondent content in any span.
    const allText = JSON.stringify(otlp.spans.map((s) => s.attributes));
    expect(allText).not.toContain('onboarding');
    expect(allText).not.toContain('friend');

    const metrics = await worker.metrics();
    expect(metrics).toMatch(/worker_session_outcomes_total\{status="completed",reason="completed"\} 1/);
    expect(metrics).toMatch(/worker_provider_latency_seconds_count\{provider="tts",operation="first_byte"\} 5/);
  }, 60_000);
});
