import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseWav, tonePcm, wavFromPcm16 } from './audio.ts';
import { startFakeOpenAI, type FakeOpenAI } from './openai-compatible.ts';

/**
 * With a recogniser behind it, the stand-in answers transcriptions with what the recogniser heard
 * (never the placeholder), sends it the audio it received, and its latency profile is the earliest
 * time a transcript may arrive, not an addition to the decode. The recogniser here is a small HTTP
 * server that records the uploads and answers after a set delay (the real one, the speech server,
 * is heard end to end in test/e2e and bench/turns.bench.ts). Only lower bounds on time are asserted.
 */
const DECODE_MS = 400;
let upstream: Server;
let upstreamUrl: string;
const uploads: Array<{ authorization: string | undefined; seconds: number; rate: number }> = [];
let fake: FakeOpenAI;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const form = await new Request('http://u/', {
        method: 'POST',
        headers: { 'content-type': req.headers['content-type'] ?? '' },
        body: Buffer.concat(chunks),
      }).formData();
      const { pcm, sampleRate } = parseWav(Buffer.from(await (form.get('file') as Blob).arrayBuffer()));
      uploads.push({ authorization: req.headers.authorization, seconds: pcm.length / 2 / sampleRate, rate: sampleRate });
      await new Promise((r) => setTimeout(r, DECODE_MS));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ text: `heard ${uploads.length}` }));
    })();
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  fake = await startFakeOpenAI({ voice: 'tone', recogniser: { url: upstreamUrl, token: 'upstream-token' } });
});
afterAll(async () => {
  await fake.close();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
});

async function batch(seconds: number): Promise<{ text: string; ms: number }> {
  const form = new FormData();
  form.set('model', 'whisper-1');
  form.set('file', new Blob([new Uint8Array(wavFromPcm16(tonePcm(seconds * 1000, 16_000), 16_000))], { type: 'audio/wav' }), 'a.wav');
  const started = performance.now();
  const res = await fetch(`${fake.url}/audio/transcriptions`, { method: 'POST', body: form });
  expect(res.status).toBe(200);
  return { text: ((await res.json()) as { text: string }).text, ms: performance.now() - started };
}

describe('the stand-in with a real recogniser behind it', () => {
  it("answers a batch transcription with what the recogniser heard in the uploaded audio, at the profile's time at the earliest", async () => {
    fake.setProfile({ stt: { baseMs: 1200 } });
    const slow = await batch(1);
    expect(slow.text).toMatch(/^heard \d+$/);
    expect(slow.ms).toBeGreaterThanOrEqual(1200);
    expect(uploads.at(-1)).toMatchObject({ authorization: 'Bearer upstream-token', rate: 16_000 });
    expect(uploads.at(-1)!.seconds).toBeCloseTo(1, 2);
    // A profile shorter than the decode adds nothing: the answer waits for the decode alone.
    fake.setProfile({ stt: { baseMs: 0 } });
    const fast = await batch(1);
    expect(fast.ms).toBeGreaterThanOrEqual(DECODE_MS);
    fake.setProfile({});
  });

  it("sends a realtime commit's audio to the recogniser as a 24 kHz WAV and completes with its transcript, no earlier than the profile says", async () => {
    fake.setProfile({ sttStream: { baseMs: 900 } });
    const ws = new WebSocket(`${fake.url.replace('http', 'ws')}/realtime?intent=transcription`);
    const events: Array<{ type: string; transcript?: string }> = [];
    ws.on('message', (d) => events.push(JSON.parse(d.toString()) as { type: string }));
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    ws.send(
      JSON.stringify({
        type: 'session.update',
        session: {
          type: 'transcription',
          audio: { input: { format: { type: 'audio/pcm', rate: 24_000 }, transcription: { model: 'm' } } },
        },
      }),
    );
    const audio = tonePcm(500, 24_000);
    ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: audio.toString('base64') }));
    const committedAt = performance.now();
    ws.send(JSON.stringify({ type: 'input_audio_buffer.commit' }));
    const deadline = Date.now() + 10_000;
    while (!events.some((e) => e.type === 'conversation.item.input_audio_transcription.completed') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 5));
    const completedAfter = performance.now() - committedAt;
    ws.close();
    const completed = events.find((e) => e.type === 'conversation.item.input_audio_transcription.completed');
    expect(completed?.transcript).toMatch(/^heard \d+$/);
    expect(completedAfter).toBeGreaterThanOrEqual(900);
    expect(uploads.at(-1)).toMatchObject({ rate: 24_000 });
    expect(uploads.at(-1)!.seconds).toBeCloseTo(0.5, 2);
    // What the recogniser heard, never the placeholder ("answer <n> (...)").
    expect(fake.requests.filter((r) => r.endpoint === 'stt-stream')).toHaveLength(1);
    fake.setProfile({});
  });
});
