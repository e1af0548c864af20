import { createServer } from 'node:net';
import { WebSocketServer } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/fakes/openai-compatible.ts';
import { tonePcm } from '../../test/fakes/audio.ts';
import { createLogger } from '../../lib/log.ts';
import type { TranscriptionStream } from '../bot/turns/types.ts';
import { ProviderError } from './errors.ts';
import { createProviders } from './index.ts';
import { StreamOpenError } from './realtime-connect.ts';
import {
  OpenAIRealtimeSpeechToText,
  STREAM_RETRY_AFTER_MS,
  STREAM_RETRY_FIRST_MS,
  type RealtimeSpeechToTextOptions,
} from './realtime-stt.ts';

/**
 * The realtime speech-to-text client against the fake's WebSocket endpoint over a real socket:
 * what it sends (batched 24 kHz audio, one commit per utterance), how commits map to transcripts,
 * and every way a stream fails (error events, refused upgrades, hangs, a wrong key).
 */
const KEY = 'sk-realtime-contract-key';
let fake: FakeOpenAI;
const opened: TranscriptionStream[] = [];

beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: KEY, voice: 'tone' });
});
afterAll(async () => {
  for (const s of opened) s.close();
  await fake.close();
});

function client(overrides: Partial<RealtimeSpeechToTextOptions> = {}): OpenAIRealtimeSpeechToText {
  // Generous deadlines: two cores shared with other suites; the timeout test sets its own.
  return new OpenAIRealtimeSpeechToText({
    baseURL: fake.url,
    apiKey: KEY,
    model: 'm-realtime',
    provider: 'fake',
    policy: { timeoutMs: 3000, retries: 1 },
    ...overrides,
  });
}

async function open(stt = client(), language = 'en'): Promise<TranscriptionStream> {
  const stream = await stt.openStream({ sampleRate: 16_000, language });
  opened.push(stream);
  return stream;
}

/** Appends `ms` of 16 kHz audio as the room delivers it: 20 ms frames. */
function speak(stream: TranscriptionStream, ms: number): void {
  const pcm = tonePcm(ms, 16_000);
  for (let i = 0; i < pcm.length; i += 640) stream.append(pcm.subarray(i, i + 640));
}

async function failure(p: Promise<unknown>): Promise<ProviderError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  return err as ProviderError;
}

const streamRequests = () => fake.requests.filter((r) => r.endpoint === 'stt-stream');

describe('realtime transcription stream', () => {
  it('sends batched 24 kHz audio and resolves a commit with its transcript', async () => {
    const stream = await open();
    const appendsBefore = fake.realtimeStats.appendEvents;
    fake.scriptTranscripts('I think the onboarding, mostly.');
    speak(stream, 1000);
    expect(await stream.commit()).toBe('I think the onboarding, mostly.');
    const last = streamRequests().at(-1)!;
    expect(last).toMatchObject({ model: 'm-realtime', language: 'en', authorization: `Bearer ${KEY}` });
    expect(last.audioSeconds).toBeCloseTo(1.0, 2); // 16 kHz in, 24 kHz on the wire: the duration holds
    // 50 frames of 20 ms went out as ~80 ms batches, not one JSON event per frame.
    const appends = fake.realtimeStats.appendEvents - appendsBefore;
    expect(appends).toBeGreaterThanOrEqual(12);
    expect(appends).toBeLessThanOrEqual(14);
  });

  it('keeps two utterances apart on one stream, even when the second is committed before the first is transcribed', async () => {
    const stream = await open();
    fake.setLatency('stt-stream', 150);
    try {
      fake.scriptTranscripts('first answer', 'second answer');
      speak(stream, 400);
      const first = stream.commit();
      speak(stream, 600);
      const second = stream.commit();
      expect(await Promise.all([first, second])).toEqual(['first answer', 'second answer']);
      expect(
        streamRequests()
          .slice(-2)
          .map((r) => Number(r.audioSeconds?.toFixed(2))),
      ).toEqual([0.4, 0.6]);
    } finally {
      fake.setLatency('stt-stream', 0);
    }
  });

  it('shows interim text from the deltas while the transcription runs, and none once it is final', async () => {
    const stream = await open();
    // 2 s spread over the four words: a delta stays the latest for 400 ms, which a 10 ms poll sees even on a loaded machine.
    fake.setLatency('stt-stream', 2000);
    try {
      fake.scriptTranscripts('one two three four');
      speak(stream, 300);
      let done = false;
      const final = stream.commit().finally(() => (done = true));
      const seen = new Set<string>();
      while (!done) {
        if (stream.interim) seen.add(stream.interim);
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(await final).toBe('one two three four');
      expect([...seen].some((t) => 'one two three four'.startsWith(t) && t.length < 'one two three four'.length)).toBe(true);
      expect(stream.interim).toBe('');
    } finally {
      fake.setLatency('stt-stream', 0);
    }
  });

  it('shows interim text while the respondent still speaks when the provider sends deltas before the commit', async () => {
    const stream = await open();
    fake.setProfile({ sttStream: { baseMs: 50, interimEveryMs: 200 } });
    try {
      fake.scriptTranscripts('one two three four');
      speak(stream, 1000);
      const deadline = Date.now() + 5000;
      while (stream.interim !== 'one two three ' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(stream.interim).toBe('one two three '); // the last word waits for the commit
      expect(await stream.commit()).toBe('one two three four');
      expect(stream.interim).toBe('');
    } finally {
      fake.setProfile({});
    }
  });

  it('clear drops the audio so far: the commit holds only what came after', async () => {
    const stream = await open();
    speak(stream, 500);
    stream.clear();
    speak(stream, 300);
    await stream.commit();
    expect(streamRequests().at(-1)!.audioSeconds).toBeCloseTo(0.3, 2);
  });

  it('resolves "" for a commit with no audio (or less than the API accepts) without asking the server', async () => {
    const stream = await open();
    const before = streamRequests().length;
    expect(await stream.commit()).toBe('');
    speak(stream, 60);
    expect(await stream.commit()).toBe('');
    speak(stream, 200); // the 60 ms were dropped, not carried into the next utterance
    fake.scriptTranscripts('after');
    expect(await stream.commit()).toBe('after');
    expect(streamRequests().length - before).toBe(1);
    expect(streamRequests().at(-1)!.audioSeconds).toBeCloseTo(0.2, 2);
    // Exactly 100 ms from a fresh start is a sample short on the wire (resampling holds one back):
    // not sent to be refused, and the stream stays in step.
    const fresh = await open();
    speak(fresh, 100);
    expect(await fresh.commit()).toBe('');
    fake.scriptTranscripts('in step');
    speak(fresh, 300);
    expect(await fresh.commit()).toBe('in step');
    expect(streamRequests().at(-1)!.audioSeconds).toBeCloseTo(0.3, 2);
  });

  it('rejects a commit answered by an error event or a failed transcription, and the stream goes on', async () => {
    const stream = await open();
    fake.failNext('stt-stream', { event: 'error' });
    speak(stream, 200);
    const err = await failure(stream.commit());
    expect(err).toMatchObject({ provider: 'stt', reason: 'stt_error', retryable: true });
    expect(err.message).toMatch(/server_error/);
    fake.failNext('stt-stream', { event: 'failed' });
    speak(stream, 200);
    expect(await failure(stream.commit())).toMatchObject({ reason: 'stt_error', retryable: false });
    // The refused commit's audio was cleared from the server's buffer, not prepended to this one.
    expect(streamRequests().at(-1)!.audioSeconds).toBeCloseTo(0.2, 2);
    fake.scriptTranscripts('fine again');
    speak(stream, 200);
    expect(await stream.commit()).toBe('fine again');
  });

  it('after a refused commit, keeps the audio of the next utterance already sent (clears the server buffer and sends it again)', async () => {
    const stream = await open();
    fake.failNext('stt-stream', { event: 'error' });
    speak(stream, 300);
    const refused = stream.commit();
    speak(stream, 400); // the respondent goes on before the error arrives
    await failure(refused);
    fake.scriptTranscripts('second');
    expect(await stream.commit()).toBe('second');
    expect(streamRequests().at(-1)!.audioSeconds).toBeCloseTo(0.4, 2);
  });

  it('bounds a completion that never comes by the provider timeout (stt_timeout), and the next commit still works', async () => {
    // 2 s: the next commit must succeed within the same bound, on a machine shared with other suites.
    const stream = await open(client({ policy: { timeoutMs: 2000, retries: 1 }, openTimeoutMs: 5000 }));
    fake.failNext('stt-stream', { hang: true });
    speak(stream, 200);
    const t0 = Date.now();
    expect(await failure(stream.commit())).toMatchObject({ kind: 'timeout', reason: 'stt_timeout' });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1950);
    expect(Date.now() - t0).toBeLessThan(6000);
    fake.scriptTranscripts('later');
    speak(stream, 200);
    expect(await stream.commit()).toBe('later');
  });

  it('rejects waiting and later commits when the connection drops', async () => {
    const own = await startFakeOpenAI({ voice: 'tone' });
    const stream = await client({ baseURL: own.url }).openStream({ sampleRate: 16_000 });
    own.failNext('stt-stream', { hang: true });
    speak(stream, 200);
    const pending = stream.commit();
    await own.close();
    expect(await failure(pending)).toMatchObject({ kind: 'network', reason: 'stt_error' });
    speak(stream, 200);
    expect(await failure(stream.commit())).toMatchObject({ kind: 'network' });
  });
});

describe('opening a stream, and falling back to batch', () => {
  it('a provider without the realtime endpoint (404) gives stt_stream_unavailable once; later turns skip the socket and batch still works', async () => {
    const batchOnly = await startFakeOpenAI({ apiKey: KEY, voice: 'tone', realtime: false });
    const lines: string[] = [];
    const logger = createLogger({ name: 'test', sink: (line) => void lines.push(line) });
    try {
      const stt = client({ baseURL: batchOnly.url, logger });
      expect(stt.mode).toBe('realtime');
      const err = await failure(stt.openStream({ sampleRate: 16_000 }));
      expect(err).toBeInstanceOf(StreamOpenError);
      expect(err).toMatchObject({ kind: 'unavailable', reason: 'stt_stream_unavailable', status: 404, permanent: true });
      expect(stt.mode).toBe('batch');
      const again = await failure(stt.openStream({ sampleRate: 16_000 }));
      expect(again.reason).toBe('stt_stream_unavailable');
      expect(batchOnly.hits['stt-stream']).toBe(0); // 404 before the key check, and never retried
      expect(lines.filter((l) => l.includes('realtime speech-to-text unavailable'))).toHaveLength(1);
      // The turn's fallback: the batch endpoint of the same provider.
      const batch = createProviders({
        llm: { baseURL: batchOnly.url, apiKey: KEY, model: 'm' },
        stt: { baseURL: batchOnly.url, apiKey: KEY, model: 'm-stt' },
        tts: { baseURL: batchOnly.url, apiKey: KEY, model: 'm', voice: 'v' },
        providerTimeoutMs: 10_000,
        providerRetries: 0,
      });
      batchOnly.scriptTranscripts('from batch');
      expect(await batch.stt.transcribe(tonePcm(300, 16_000), { sampleRate: 16_000 })).toBe('from batch');
    } finally {
      await batchOnly.close();
    }
  });

  it(
    'an outage (503 on upgrade, a refused port) falls back for a short wait that doubles per failure up to a minute, and resets once a ' +
      'stream opens',
    async () => {
      let now = 1_000_000;
      const stt = client({ now: () => now });
      const fail503 = async () => {
        fake.failNext('stt-stream', { status: 503 });
        return failure(stt.openStream({ sampleRate: 16_000 }));
      };
      expect(await fail503()).toMatchObject({ reason: 'stt_stream_unavailable', status: 503, permanent: false });
      // A Service that came up a moment ago is asked again after the first short wait, not after a minute.
      const waits: number[] = [];
      for (let wait = STREAM_RETRY_FIRST_MS; ;) {
        expect(stt.mode).toBe('batch');
        now += wait - 1;
        expect(stt.mode).toBe('batch');
        now += 2;
        expect(stt.mode).toBe('realtime');
        waits.push(wait);
        if (wait === STREAM_RETRY_AFTER_MS) break;
        await fail503();
        wait = Math.min(wait * 2, STREAM_RETRY_AFTER_MS);
      }
      expect(waits).toEqual([2000, 4000, 8000, 16_000, 32_000, 60_000]);
      // The wait stays at the cap while the outage lasts...
      await fail503();
      now += STREAM_RETRY_AFTER_MS - 1;
      expect(stt.mode).toBe('batch');
      now += 2;
      // ...and an open that succeeds resets it to the first wait.
      opened.push(await stt.openStream({ sampleRate: 16_000 }));
      await fail503();
      now += STREAM_RETRY_FIRST_MS + 1;
      expect(stt.mode).toBe('realtime');

      const closed = createServer();
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
      const port = (closed.address() as { port: number }).port;
      await new Promise<void>((r) => closed.close(() => r()));
      const refused = await failure(client({ baseURL: `http://127.0.0.1:${port}/v1` }).openStream({ sampleRate: 16_000 }));
      expect(refused).toMatchObject({ reason: 'stt_stream_unavailable', permanent: false });
      expect(refused.message).toMatch(/ECONNREFUSED/);
    },
  );

  it('a server that takes the upgrade but never starts a session is unavailable after the open timeout, not the provider timeout', async () => {
    const mute = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await new Promise<void>((r) => mute.once('listening', () => r()));
    try {
      const port = (mute.address() as { port: number }).port;
      const stt = client({ baseURL: `http://127.0.0.1:${port}/v1`, policy: { timeoutMs: 20_000, retries: 1 }, openTimeoutMs: 300 });
      const t0 = Date.now();
      expect(await failure(stt.openStream({ sampleRate: 16_000 }))).toMatchObject({ reason: 'stt_stream_unavailable', permanent: false });
      expect(Date.now() - t0).toBeLessThan(3000);
    } finally {
      for (const ws of mute.clients) ws.terminate();
      await new Promise((r) => mute.close(r));
    }
  });

  it('a wrong key is stt_error (401), not a reason to fall back, and the key is in no message or log line', async () => {
    const lines: string[] = [];
    const stt = client({
      apiKey: 'sk-wrong-secret-value-123',
      logger: createLogger({ name: 'test', sink: (line) => void lines.push(line) }),
    });
    const err = await failure(stt.openStream({ sampleRate: 16_000 }));
    expect(err).toMatchObject({ kind: 'http', status: 401, reason: 'stt_error', retryable: false });
    expect(err.message).not.toContain('sk-wrong');
    expect(lines.join('\n')).not.toContain('sk-wrong');
    expect(stt.mode).toBe('realtime');
  });

  it('cancelling while it opens gives aborted', async () => {
    const cancel = new AbortController();
    cancel.abort();
    expect(await failure(client().openStream({ sampleRate: 16_000, signal: cancel.signal }))).toMatchObject({ kind: 'aborted' });
  });
});

describe('createProviders', () => {
  const base = {
    llm: { baseURL: 'http://127.0.0.1:1/v1', apiKey: 'k', model: 'm' },
    stt: { baseURL: 'https://stt.example/v1', apiKey: 'k', model: 'whisper-1' },
    tts: { baseURL: 'http://127.0.0.1:1/v1', apiKey: 'k', model: 'm', voice: 'v' },
    providerTimeoutMs: 500,
    providerRetries: 1,
  };

  it('builds the streaming STT from STT_MODE and STT_REALTIME_MODEL, and none in batch mode', () => {
    const realtime = createProviders({ ...base, turns: { engines: { sttMode: 'realtime', sttRealtimeModel: 'gpt-4o-mini-transcribe' } } });
    expect(realtime.sttStream).toMatchObject({ model: 'gpt-4o-mini-transcribe', provider: 'openai-compatible:stt.example' });
    expect(createProviders({ ...base, turns: { engines: { sttMode: 'batch', sttRealtimeModel: 'x' } } }).sttStream).toBeNull();
    expect(createProviders(base).sttStream).toBeNull();
  });
});
