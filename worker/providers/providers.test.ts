import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/fakes/openai-compatible.ts';
import { tonePcm } from '../../test/fakes/audio.ts';
import { ProviderError, isRetryableStatus } from './errors.ts';
import { createProviders, type Providers } from './index.ts';

/**
 * The OpenAI-compatible providers against the local fake over real HTTP: streaming, our one
 * retry policy (what is retried and what is final), deadlines and cancellation.
 */
let fake: FakeOpenAI;
let providers: Providers;

beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: 'sk-contract', voice: 'tone' });
  const endpoint = { baseURL: fake.url, apiKey: 'sk-contract' };
  providers = createProviders({
    llm: { ...endpoint, model: 'm-llm' },
    stt: { ...endpoint, model: 'm-stt' },
    tts: { ...endpoint, model: 'm-tts', voice: 'alloy' },
    // Calls that must succeed get a wide timeout (the machine is shared); the hang test sets its own.
    providerTimeoutMs: 5000,
    providerRetries: 1,
  });
});
afterAll(() => fake.close());

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

async function failure(p: Promise<unknown>): Promise<ProviderError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  return err as ProviderError;
}

describe('language model', () => {
  it('streams deltas that join to the reply, and completes without streaming', async () => {
    fake.scriptLlm('FOLLOW_UP: tell me more please', 'A summary.');
    const deltas = await collect(providers.llm.stream([{ role: 'user', content: 'hi' }]));
    expect(deltas.length).toBeGreaterThan(2);
    expect(deltas.join('')).toBe('FOLLOW_UP: tell me more please');
    expect(await providers.llm.complete([{ role: 'user', content: 'sum up' }])).toBe('A summary.');
    expect(fake.requests.filter((r) => r.endpoint === 'chat').map((r) => [r.model, r.stream])).toEqual([
      ['m-llm', true],
      ['m-llm', false],
    ]);
  });

  it('retries a 500 once and succeeds', async () => {
    fake.failNext('chat', { status: 500 });
    fake.scriptLlm('NEXT');
    const before = fake.hits.chat;
    expect((await collect(providers.llm.stream([{ role: 'user', content: 'x' }]))).join('')).toBe('NEXT');
    expect(fake.hits.chat - before).toBe(2);
  });

  it('retries a 429, but never a 400', async () => {
    fake.failNext('chat', { status: 429 });
    let before = fake.hits.chat;
    await providers.llm.complete([{ role: 'user', content: 'x' }]);
    expect(fake.hits.chat - before).toBe(2);
    fake.failNext('chat', { status: 400 });
    before = fake.hits.chat;
    const err = await failure(providers.llm.complete([{ role: 'user', content: 'x' }]));
    expect(err).toMatchObject({ provider: 'llm', kind: 'http', status: 400, retryable: false, reason: 'llm_error' });
    expect(fake.hits.chat - before).toBe(1);
  });

  it('times out a hung call per attempt and gives llm_timeout after the retry', async () => {
    const quick = createProviders({
      llm: { baseURL: fake.url, apiKey: 'sk-contract', model: 'm-llm' },
      stt: { baseURL: fake.url, apiKey: 'sk-contract', model: 'm-stt' },
      tts: { baseURL: fake.url, apiKey: 'sk-contract', model: 'm-tts', voice: 'alloy' },
      providerTimeoutMs: 500,
      providerRetries: 1,
    });
    fake.failNext('chat', { hang: true, count: 2 });
    const t0 = Date.now();
    const err = await failure(collect(quick.llm.stream([{ role: 'user', content: 'x' }])));
    expect(err).toMatchObject({ kind: 'timeout', reason: 'llm_timeout' });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
    // Two 500 ms attempts and a 200 ms backoff; the upper bound only shows it did not wait for more (wide: the machine is shared).
    expect(Date.now() - t0).toBeLessThan(6000);
  });

  it('stops at once, without retrying, when the session cancels', async () => {
    fake.failNext('chat', { hang: true, count: 1 });
    const cancel = new AbortController();
    const before = fake.hits.chat;
    setTimeout(() => cancel.abort('hangup'), 100);
    const err = await failure(providers.llm.complete([{ role: 'user', content: 'x' }], { signal: cancel.signal }));
    expect(err.kind).toBe('aborted');
    expect(fake.hits.chat - before).toBe(1);
  });
});

describe('speech-to-text', () => {
  it('uploads a WAV of the utterance and returns the text', async () => {
    fake.scriptTranscripts('hello there');
    expect(await providers.stt.transcribe(tonePcm(500, 16_000), { sampleRate: 16_000, language: 'en' })).toBe('hello there');
    const last = fake.requests.filter((r) => r.endpoint === 'stt').at(-1)!;
    expect(last.model).toBe('m-stt');
    expect(last.audioSeconds).toBeCloseTo(0.5, 2);
    expect(last.authorization).toBe('Bearer sk-contract');
  });
});

describe('text-to-speech', () => {
  it('streams 24 kHz PCM in several chunks', async () => {
    const chunks = await collect(providers.tts.synthesize('A sentence long enough for several chunks of audio.'));
    expect(chunks.length).toBeGreaterThan(1);
    const bytes = chunks.reduce((n, c) => n + c.length, 0);
    expect(bytes % 2).toBe(0);
    expect(bytes / 2 / providers.tts.sampleRate).toBeGreaterThan(0.3);
    expect(fake.requests.filter((r) => r.endpoint === 'tts').at(-1)).toMatchObject({ model: 'm-tts', responseFormat: 'pcm' });
  });

  it('gives tts_error for a wrong key without retrying', async () => {
    const bad = createProviders({
      llm: { baseURL: fake.url, apiKey: 'x', model: 'm' },
      stt: { baseURL: fake.url, apiKey: 'x', model: 'm' },
      tts: { baseURL: fake.url, apiKey: 'wrong', model: 'm', voice: 'v' },
      providerTimeoutMs: 5000,
      providerRetries: 1,
    });
    const before = fake.hits.tts;
    const err = await failure(collect(bad.tts.synthesize('hi')));
    expect(err).toMatchObject({ status: 401, retryable: false, reason: 'tts_error' });
    expect(fake.hits.tts - before).toBe(0); // refused at the auth check, before being counted
  });
});

describe('isRetryableStatus', () => {
  it.each([
    [400, false],
    [401, false],
    [403, false],
    [404, false],
    [408, true],
    [409, true],
    [422, false],
    [429, true],
    [499, true],
    [500, true],
    [503, true],
  ])('%i -> %s', (status, retryable) => {
    expect(isRetryableStatus(status)).toBe(retryable);
  });
});
