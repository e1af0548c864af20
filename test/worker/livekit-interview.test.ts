import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { LiveKitServerApi } from '../../worker/rooms/livekit/server-api.ts';
import { hasEspeak, speechPcm, tonePcm } from '../fakes/audio.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-compatible.ts';
import { startOtlpReceiver, type OtlpReceiver } from '../fakes/otlp-receiver.ts';
import { runLiveKitRespondent } from '../harness/livekit-respondent.ts';
import { startLiveKitServer, type LiveKitServer } from '../harness/livekit-server.ts';
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

/**
 * Whole interviews through a real livekit-server (ROOM_PROVIDER=livekit): the worker's bot joins
 * with @livekit/rtc-node, a Node respondent with the same client speaks espeak-ng answers over
 * WebRTC and hears the bot; captions, states and the end travel as data messages.
 */
let livekit: LiveKitServer;
let openai: FakeOpenAI;
let otlp: OtlpReceiver;
let backend: FakeBackend;
let worker: WorkerProcess;

const say = (text: string): Buffer => Buffer.concat([hasEspeak() ? speechPcm(text, 16_000) : tonePcm(800, 16_000)]);

beforeAll(async () => {
  [livekit, openai, otlp, backend] = await Promise.all([startLiveKitServer(), startFakeOpenAI(), startOtlpReceiver(), startFakeBackend()]);
  worker = await startWorkerProcess(
    baseEnv({
      redisUrl: inject('redisUrl'),
      backendUrl: backend.url,
      llmUrl: openai.url,
      REDIS_KEY_PREFIX: `livekit-${Date.now()}`,
      WARM_POOL_SIZE: '1',
      IDLE_TIMEOUT_SECONDS: '15',
      VAD_SILENCE_MS: '500',
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      ...livekit.env,
    }),
  );
  await worker.waitReady();
  await waitIdleSlots(worker, 1);
});

afterAll(async () => {
  if (process.env.DEBUG_WORKER) console.log(worker?.logs.join(''), livekit?.output());
  await worker?.stop();
  await Promise.all([openai?.close(), otlp?.close(), backend?.close(), livekit?.stop()]);
});

describe('interviews in LiveKit rooms', () => {
  it('runs a whole interview through the server: audio both ways, captions, transcript, report, spans', async () => {
    openai.scriptLlm('FOLLOW_UP: What did you like most?', 'NEXT', 'The respondent liked the onboarding.');
    openai.scriptTranscripts('I heard about you from a friend.', 'The onboarding was smooth.', 'Fast support.');
    const body = spawnBody({}, 2);
    const spawned = await worker.spawnSession(body);
    expect(spawned.status).toBe(200);
    // room_url is the LiveKit server itself; the room travels in the token.
    expect(spawned.body.room_url).toBe(livekit.url);
    const claims = JSON.parse(Buffer.from(String(spawned.body.token).split('.')[1]!, 'base64url').toString()) as {
      sub: string;
      video: { room: string };
    };
    expect(claims.sub).toBe(`respondent:${String(body.sessionId)}`);
    const api = new LiveKitServerApi({ url: livekit.url, keys: livekit });
    expect((await api.listRooms([claims.video.room])).map((r) => r.name)).toEqual([claims.video.room]);

    const result = await runLiveKitRespondent({
      url: String(spawned.body.room_url),
      token: String(spawned.body.token),
      answers: [say('I heard about you from a friend'), say('it was smooth'), say('fast support')],
      timeoutMs: 90_000,
    });

    expect(result.disconnectedBy).toBe('ended');
    expect(result.ended).toBe('completed');
    const botCaptions = result.messages.filter((m) => m.type === 'caption' && m.speaker === 'bot').map((m) => m.text);
    expect(botCaptions).toEqual(['Hi.', 'Question 1?', 'What did you like most?', 'Question 2?', 'Thanks, bye.']);
    expect(result.messages.filter((m) => m.type === 'audio_end')).toHaveLength(5);
    // The bot's voice was heard over WebRTC: five utterances with audible sound.
    expect(result.botUtterances.length).toBeGreaterThanOrEqual(4);
    // The closing words included: heard after the last answer, though `ended` overtakes them (the
    // respondent leaves once they have played out, as the page does).
    expect(result.botUtterances.at(-1)!.firstAudio).toBeGreaterThan(result.answers.at(-1)!.finished);
    expect(result.heardMs).toBeGreaterThan(500);
    const respondentCaptions = result.messages.filter((m) => m.type === 'caption' && m.speaker === 'respondent').map((m) => m.text);
    expect(respondentCaptions).toEqual(['I heard about you from a friend.', 'The onboarding was smooth.', 'Fast support.']);
    // The respondent's speech crossed the server: three turns reached speech-to-text, each real audio.
    const stt = openai.requests.filter((r) => r.endpoint === 'stt-stream'); // realtime transcription, the default (STT_MODE)
    expect(stt).toHaveLength(3);
    for (const r of stt) expect(r.audioSeconds).toBeGreaterThan(0.3);

    const report = await backend.waitForReport(String(body.sessionId), 15_000);
    expect(report.body.status).toBe('completed');
    const transcript = JSON.parse(readFileSync(fileURLToPath(report.body.response!.transcriptKey), 'utf8')) as {
      turns: Array<{ speaker: string; text: string }>;
    };
    expect(transcript.turns.filter((t) => t.speaker === 'respondent').map((t) => t.text)).toEqual(respondentCaptions);

    const mine = () => otlp.spans.filter((s) => s.attributes['session.id'] === body.sessionId);
    await otlp.waitFor(
      () => mine().some((s) => s.name === 'room.connect') && mine().some((s) => s.name === 'session.start'),
      10_000,
      'the session spans',
    );
    const connect = mine().find((s) => s.name === 'room.connect')!;
    expect(connect.attributes['room.provider']).toBe('livekit');
    expect(Number(connect.attributes['room.connect_ms'])).toBeGreaterThan(0);
    expect(mine().find((s) => s.name === 'session.start')!.attributes['room.provider']).toBe('livekit');
    // After the session the worker deletes the room on the server.
    await waitFor(async () => (await api.listRooms([claims.video.room])).length === 0, {
      timeoutMs: 10_000,
      what: 'the room to be deleted',
    });
  }, 120_000);

  it('ends the session as a hang-up when the respondent hangs up through a data message', async () => {
    await waitIdleSlots(worker, 1);
    const body = spawnBody({}, 2);
    const spawned = await worker.spawnSession(body);
    expect(spawned.status).toBe(200);
    const result = await runLiveKitRespondent({
      url: String(spawned.body.room_url),
      token: String(spawned.body.token),
      answers: [],
      onListening: () => 'hangup',
      timeoutMs: 60_000,
    });
    expect(result.disconnectedBy).toBe('hangup');
    // The respondent left once the bot had answered its hang-up: leaving at once could close the data
    // channel before the hang-up was out, and the bot then saw a respondent who left (a loaded run did).
    expect(result.ended).toBe('hangup');
    const report = await backend.waitForReport(String(body.sessionId), 15_000);
    expect(report.body).toMatchObject({ status: 'failed', reason: 'respondent_hangup' });
  }, 90_000);

  it('a worker lost mid-interview: the replica that reaps it deletes the room, so the respondent is not left in silence', async () => {
    const prefix = `livekit-lost-${Date.now()}`;
    const env = (pod: string) =>
      baseEnv({
        redisUrl: inject('redisUrl'),
        backendUrl: backend.url,
        llmUrl: openai.url,
        REDIS_KEY_PREFIX: prefix,
        WARM_POOL_SIZE: '1',
        POD_NAME: pod,
        HEARTBEAT_INTERVAL_MS: '300',
        HEARTBEAT_TTL_MS: '1500',
        IDLE_TIMEOUT_SECONDS: '60',
        ...livekit.env,
      });
    const doomed = await startWorkerProcess(env('lk-doomed'));
    let survivor: WorkerProcess | undefined;
    try {
      await doomed.waitReady();
      await waitIdleSlots(doomed, 1);
      const body = spawnBody();
      const spawned = await doomed.spawnSession(body);
      expect(spawned.status).toBe(200);
      const room = (
        JSON.parse(Buffer.from(String(spawned.body.token).split('.')[1]!, 'base64url').toString()) as { video: { room: string } }
      ).video.room;
      let listening!: () => void;
      const heard = new Promise<void>((resolve) => (listening = resolve));
      const respondent = runLiveKitRespondent({
        url: String(spawned.body.room_url),
        token: String(spawned.body.token),
        answers: [],
        onListening: () => {
          listening();
          return 'silent';
        },
        timeoutMs: 60_000,
      });
      await heard;
      await doomed.stop(); // kill -9 of the worker and its bots: nobody says goodbye in the room
      survivor = await startWorkerProcess(env('lk-survivor'));
      await survivor.waitReady();
      const report = await backend.waitForReport(String(body.sessionId), 20_000);
      expect(report.body).toMatchObject({ status: 'failed', reason: 'worker_lost' });
      const api = new LiveKitServerApi({ url: livekit.url, keys: livekit });
      await waitFor(async () => (await api.listRooms([room])).length === 0, {
        timeoutMs: 10_000,
        what: "the lost session's room to be deleted",
      });
      // The respondent's client hears of it from the server (the page shows Try again on ROOM_DELETED).
      expect((await respondent).disconnectedBy).toBe('server');
    } finally {
      await doomed.stop();
      await survivor?.stop();
    }
  }, 300_000);
});
