import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tonePcm } from '../../test/fakes/audio.ts';
import { ProviderError } from './errors.ts';
import { createProviders, type Providers } from './index.ts';
import { OpenAIRealtimeSpeechToText } from './realtime-stt.ts';

/**
 * Issue 19: a provider's malformed answer becomes a ProviderError, never a TypeError. A realtime
 * `...completed` without `transcript`, or an `error` without `error`, used to throw inside the
 * socket's message handler, which took the whole bot process down (exit 70). Each case here is
 * one scripted answer over a real socket; vitest fails a file on any uncaught exception.
 */
let http: Server;
let wss: WebSocketServer;
let base = '';
/** What the HTTP server answers next: status, content type and body. */
let nextAnswer: { type: string; body: string | Buffer } = { type: 'application/json', body: '{}' };
/** What the realtime server answers to a commit: each entry one text frame (a string is sent as is). */
let onCommit: (itemId: string) => Array<string | Record<string, unknown>> = () => [];

beforeAll(async () => {
  http = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': nextAnswer.type });
      res.end(nextAnswer.body);
    });
  });
  wss = new WebSocketServer({ noServer: true });
  http.on('upgrade', (req, socket, head) => wss.handleUpgrade(req, socket, head, (ws) => serve(ws)));
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(http.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  for (const ws of wss.clients) ws.terminate();
  http.closeAllConnections();
  await new Promise((r) => http.close(r));
});
afterEach(() => {
  for (const ws of wss.clients) ws.terminate();
});

let items = 0;
function serve(ws: WebSocket): void {
  ws.on('message', (data) => {
    const event = JSON.parse(data.toString()) as { type: string; event_id?: string };
    if (event.type === 'session.update') ws.send(JSON.stringify({ type: 'session.updated', session: {} }));
    if (event.type === 'input_audio_buffer.commit') {
      for (const frame of onCommit(`item_${++items}`)) ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
    }
  });
}

const providers = (): Providers => {
  const endpoint = { baseURL: base, apiKey: 'k', model: 'm' };
  return createProviders({ llm: endpoint, stt: endpoint, tts: { ...endpoint, voice: 'v' }, providerTimeoutMs: 2000, providerRetries: 0 });
};

async function failure(p: Promise<unknown>): Promise<ProviderError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  return err as ProviderError;
}

async function streamCommit(answers: (itemId: string) => Array<string | Record<string, unknown>>): Promise<string> {
  onCommit = answers;
  const stt = new OpenAIRealtimeSpeechToText({
    baseURL: base,
    apiKey: 'k',
    model: 'm',
    provider: 'scripted',
    policy: { timeoutMs: 20_000, retries: 0 },
  });
  const stream = await stt.openStream({ sampleRate: 16_000 });
  const pcm = tonePcm(300, 16_000);
  for (let i = 0; i < pcm.length; i += 640) stream.append(pcm.subarray(i, i + 640));
  try {
    return await stream.commit();
  } finally {
    stream.close();
  }
}

const committed = (item: string) => ({ type: 'input_audio_buffer.committed', item_id: item });
const completed = (item: string, transcript: unknown) => ({
  type: 'conversation.item.input_audio_transcription.completed',
  item_id: item,
  transcript,
});

describe('realtime transcription events', () => {
  it('a completed event without transcript fails its commit at once (bad_response), not the process', async () => {
    const t0 = Date.now();
    const err = await failure(
      streamCommit((item) => [committed(item), { type: 'conversation.item.input_audio_transcription.completed', item_id: item }]),
    );
    expect(err).toMatchObject({ kind: 'bad_response', reason: 'stt_error' });
    expect(err.message).toMatch(/malformed conversation\.item\.input_audio_transcription\.completed \(transcript: invalid_type\)/);
    expect(Date.now() - t0).toBeLessThan(10_000); // not the 20 s timeout
  });

  it('an error event without error fails the waiting commit', async () => {
    const err = await failure(streamCommit((item) => [committed(item), { type: 'error' }]));
    expect(err).toMatchObject({ kind: 'bad_response', reason: 'stt_error' });
    expect(err.message).toContain('malformed_error_event');
  });

  it('an error event whose error is null, a failed event without error: clear failures', async () => {
    expect(await failure(streamCommit((item) => [committed(item), { type: 'error', error: null }]))).toMatchObject({
      kind: 'bad_response',
    });
    expect(
      await failure(
        streamCommit((item) => [committed(item), { type: 'conversation.item.input_audio_transcription.failed', item_id: item }]),
      ),
    ).toMatchObject({ kind: 'bad_response' });
  });

  it('frames that are not event objects are ignored, and the good answer after them is read', async () => {
    const text = await streamCommit((item) => [
      'null',
      '[]',
      '42',
      'not json',
      '{"type":5}',
      '{"type":"conversation.item.input_audio_transcription.delta","item_id":{}}',
      committed(item),
      completed(item, ' fine '),
    ]);
    expect(text).toBe('fine');
  });

  it('a committed event without item_id fails its commit; a huge transcript fails it too', async () => {
    expect(await failure(streamCommit((item) => [{ type: 'input_audio_buffer.committed' }, completed(item, 'x')]))).toMatchObject({
      kind: 'bad_response',
    });
    expect(await failure(streamCommit((item) => [committed(item), completed(item, 'x'.repeat(100_000))]))).toMatchObject({
      kind: 'bad_response',
    });
  });
});

describe('HTTP answers', () => {
  it('a transcription without text, or with text of another type, is stt_error', async () => {
    for (const body of ['{}', '{"text":5}', '{"text":null}', '[]', 'null']) {
      nextAnswer = { type: 'application/json', body };
      expect(await failure(providers().stt.transcribe(tonePcm(200, 16_000), { sampleRate: 16_000 })), body).toMatchObject({
        reason: 'stt_error',
      });
    }
  });

  it('a chat completion without a string content is llm_error', async () => {
    for (const body of ['{}', '{"choices":[]}', '{"choices":[{"message":{}}]}', '{"choices":[{"message":{"content":5}}]}']) {
      nextAnswer = { type: 'application/json', body };
      expect(await failure(providers().llm.complete([{ role: 'user', content: 'hi' }])), body).toMatchObject({
        reason: 'llm_error',
        kind: 'bad_response',
      });
    }
  });

  it('a streamed chunk of the wrong shape, or a reply past any turn, is llm_error (bad_response)', async () => {
    const sse = (...chunks: string[]) => chunks.map((c) => `data: ${c}\n\n`).join('') + 'data: [DONE]\n\n';
    const read = async () => {
      let text = '';
      for await (const delta of providers().llm.stream([{ role: 'user', content: 'hi' }])) text += delta;
      return text;
    };
    nextAnswer = {
      type: 'text/event-stream',
      body: sse('{"choices":[{"delta":{"content":"Hello "}}]}', '{"choices":[{"delta":{"content":"there"}}]}'),
    };
    expect(await read()).toBe('Hello there');
    for (const bad of [
      '{"choices":5}',
      '{"choices":[{"delta":{"content":7}}]}',
      '{"nothing":1}',
      `{"choices":[{"delta":{"content":"${'x'.repeat(30_000)}"}}]}`,
    ]) {
      nextAnswer = { type: 'text/event-stream', body: sse('{"choices":[{"delta":{"content":"Hi "}}]}', bad) };
      expect(await failure(read()), bad.slice(0, 60)).toMatchObject({ reason: 'llm_error', kind: 'bad_response' });
    }
  });

  it('speech: a JSON body is tts_error, an odd byte is held back, too much audio for the text is tts_error', async () => {
    const collect = async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of providers().tts.synthesize('Hello.')) chunks.push(chunk);
      return chunks;
    };
    nextAnswer = { type: 'application/json', body: '{"error":{"message":"overloaded"}}' };
    expect(await failure(collect())).toMatchObject({ reason: 'tts_error', kind: 'bad_response' });
    nextAnswer = { type: 'audio/pcm', body: Buffer.alloc(4801) };
    const chunks = await collect();
    expect(chunks.every((c) => c.length % 2 === 0)).toBe(true);
    expect(Buffer.concat(chunks).length).toBe(4800);
    nextAnswer = { type: 'audio/pcm', body: Buffer.alloc(24_000 * 2 * 60) }; // a minute of audio for "Hello."
    expect(await failure(collect())).toMatchObject({ reason: 'tts_error', kind: 'bad_response' });
  });
});
