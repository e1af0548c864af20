import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/fakes/openai-compatible.ts';
import { tonePcm } from '../../test/fakes/audio.ts';
import { createProviders, type Providers } from './index.ts';
import { openTranscription, type ResilientTranscriptionStream } from './transcription.ts';

/**
 * The pipeline's transcription stream: realtime when the provider streams, the batch endpoint
 * when it cannot (for the whole session, or for one turn whose realtime commit failed), and a
 * dropped socket reopened at the next utterance. Against the fake over real sockets.
 */
const KEY = 'sk-transcription-contract';
let fake: FakeOpenAI;
let batchOnly: FakeOpenAI;
const streams: ResilientTranscriptionStream[] = [];

beforeAll(async () => {
  [fake, batchOnly] = await Promise.all([startFakeOpenAI({ apiKey: KEY, voice: 'tone' }), startFakeOpenAI({ apiKey: KEY, voice: 'tone', realtime: false })]);
});
afterAll(async () => {
  for (const s of streams) s.close();
  await Promise.all([fake.close(), batchOnly.close()]);
});

function providers(server: FakeOpenAI, sttMode: 'realtime' | 'batch' = 'realtime'): Providers {
  const endpoint = { baseURL: server.url, apiKey: KEY };
  return createProviders({
    llm: { ...endpoint, model: 'm' }, stt: { ...endpoint, model: 'm-batch' }, tts: { ...endpoint, model: 'm', voice: 'v' },
    providerTimeoutMs: 1500, providerRetries: 0, turns: { sttMode, sttRealtimeModel: 'm-rt' },
  });
}

async function open(server: FakeOpenAI, fallbacks: string[] = [], sttMode: 'realtime' | 'batch' = 'realtime'): Promise<ResilientTranscriptionStream> {
  const stream = await openTranscription(providers(server, sttMode), { sampleRate: 16_000, language: 'en', onFallback: (r) => void fallbacks.push(r) });
  streams.push(stream);
  return stream;
}

const last = (server: FakeOpenAI, n: number) => server.requests.slice(-n).map((r) => [r.endpoint, Number(r.audioSeconds?.toFixed(2))]);

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within 5 s`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('openTranscription', () => {
  it('streams when the provider can', async () => {
    const fallbacks: string[] = [];
    const stream = await open(fake, fallbacks);
    expect(stream.path).toBe('realtime');
    fake.scriptTranscripts('streamed');
    stream.append(tonePcm(400, 16_000));
    expect(await stream.commit()).toBe('streamed');
    expect(last(fake, 1)).toEqual([['stt-stream', 0.4]]);
    expect(fallbacks).toEqual([]);
  });

  it('uses batch for every turn when the provider has no realtime endpoint, saying why', async () => {
    const fallbacks: string[] = [];
    const stream = await open(batchOnly, fallbacks);
    expect(stream.path).toBe('batch');
    batchOnly.scriptTranscripts('uploaded');
    stream.append(tonePcm(500, 16_000));
    expect(await stream.commit()).toBe('uploaded');
    expect(last(batchOnly, 1)).toEqual([['stt', 0.5]]);
    expect(fallbacks).toEqual(['stt_stream_unavailable']);
  });

  it('in batch mode uploads each turn without calling it a fallback', async () => {
    const fallbacks: string[] = [];
    const stream = await open(fake, fallbacks, 'batch');
    expect(stream.path).toBe('batch');
    stream.append(tonePcm(300, 16_000));
    stream.clear();
    stream.append(tonePcm(200, 16_000));
    await stream.commit();
    expect(last(fake, 1)).toEqual([['stt', 0.2]]);
    expect(fallbacks).toEqual([]);
  });

  it('transcribes a turn again by batch when its realtime commit fails or times out, and keeps streaming after', async () => {
    const fallbacks: string[] = [];
    const stream = await open(fake, fallbacks);
    fake.failNext('stt-stream', { event: 'error' });
    fake.scriptTranscripts('from batch'); // the error event comes instead of a transcription
    stream.append(tonePcm(300, 16_000));
    expect(await stream.commit()).toBe('from batch');
    expect(last(fake, 1)).toEqual([['stt', 0.3]]);
    fake.failNext('stt-stream', { hang: true });
    fake.scriptTranscripts('never completed', 'from batch again');
    stream.append(tonePcm(350, 16_000));
    expect(await stream.commit()).toBe('from batch again');
    expect(last(fake, 2)).toEqual([['stt-stream', 0.35], ['stt', 0.35]]);
    expect(fallbacks).toEqual(['stt_error', 'stt_timeout']);
    expect(stream.path).toBe('realtime');
    fake.scriptTranscripts('streamed again');
    stream.append(tonePcm(200, 16_000));
    expect(await stream.commit()).toBe('streamed again');
  });

  it('after the server drops the socket: that turn by batch, then a new stream that catches up with the utterance already under way', async () => {
    const fallbacks: string[] = [];
    const stream = await open(fake, fallbacks);
    const connections = fake.realtimeStats.connections;
    fake.failNext('stt-stream', { event: 'close' });
    fake.scriptTranscripts('saved by batch');
    stream.append(tonePcm(300, 16_000));
    expect(await stream.commit()).toBe('saved by batch');
    expect(fallbacks).toEqual(['stt_error']);
    stream.append(tonePcm(240, 16_000)); // spoken while the new stream opens
    await until(() => stream.path === 'realtime', 'a new stream');
    expect(fake.realtimeStats.connections).toBe(connections + 1);
    stream.append(tonePcm(160, 16_000));
    fake.scriptTranscripts('whole utterance');
    expect(await stream.commit()).toBe('whole utterance');
    expect(last(fake, 1)).toEqual([['stt-stream', 0.4]]);
  });

  it('a wrong key fails the turn as the batch path always did (stt_error, 401), naming that reason', async () => {
    const fallbacks: string[] = [];
    const endpoint = { baseURL: fake.url, apiKey: 'sk-not-the-key' };
    const wrong = createProviders({ llm: { ...endpoint, model: 'm' }, stt: { ...endpoint, model: 'm' }, tts: { ...endpoint, model: 'm', voice: 'v' }, providerTimeoutMs: 1500, providerRetries: 0, turns: { sttMode: 'realtime', sttRealtimeModel: 'm-rt' } });
    const stream = await openTranscription(wrong, { sampleRate: 16_000, onFallback: (r) => void fallbacks.push(r) });
    streams.push(stream);
    expect(stream.path).toBe('batch');
    stream.append(tonePcm(300, 16_000));
    await expect(stream.commit()).rejects.toMatchObject({ reason: 'stt_error', status: 401 });
    expect(fallbacks).toEqual(['stt_error']);
  });

  it('close ends it: later commits reject as aborted', async () => {
    const stream = await open(fake);
    stream.close();
    await expect(stream.commit()).rejects.toMatchObject({ kind: 'aborted' });
  });
});
