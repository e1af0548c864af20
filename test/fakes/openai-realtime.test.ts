import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from './openai-compatible.ts';
import { tonePcm, wavFromPcm16 } from './audio.ts';

/**
 * The stand-in's realtime endpoint speaks the protocol as the API does, seen by a raw WebSocket
 * client (not our provider, so a shared mistake cannot hide), and its latency profiles delay
 * what a bench measures.
 */
const KEY = 'sk-fake-contract-key';
let fake: FakeOpenAI;

beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: KEY, voice: 'tone' });
});
afterAll(() => fake.close());

type Event = { type: string; [k: string]: unknown };

async function connect(
  query = '?intent=transcription',
  key = KEY,
): Promise<{ ws: WebSocket; events: Event[]; next: (type: string) => Promise<Event> }> {
  const ws = new WebSocket(`${fake.url.replace('http', 'ws')}/realtime${query}`, { headers: { Authorization: `Bearer ${key}` } });
  const events: Event[] = [];
  ws.on('message', (data) => events.push(JSON.parse(data.toString()) as Event));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let seen = 0;
  const next = async (type: string): Promise<Event> => {
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline) {
      const i = events.findIndex((e, k) => k >= seen && e.type === type);
      if (i >= 0) {
        seen = i + 1;
        return events[i]!;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    throw new Error(`no ${type} within 5 s; got ${events.map((e) => e.type).join(', ')}`);
  };
  return { ws, events, next };
}

const send = (ws: WebSocket, event: Record<string, unknown>) => ws.send(JSON.stringify(event));
const configure = {
  type: 'session.update',
  session: {
    type: 'transcription',
    audio: {
      input: { format: { type: 'audio/pcm', rate: 24_000 }, transcription: { model: 'm-rt', language: 'de' }, turn_detection: null },
    },
  },
};

async function upgradeStatus(query: string, key: string): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${fake.url.replace('http', 'ws')}/realtime${query}`, { headers: { Authorization: `Bearer ${key}` } });
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.on('open', () => resolve(101));
    ws.on('error', () => undefined);
  });
}

describe('fake realtime transcription endpoint', () => {
  it('greets with session.created, applies session.update, and transcribes a commit: committed, deltas, completed', async () => {
    const { ws, next, events } = await connect();
    expect((await next('session.created')).session).toMatchObject({ type: 'transcription' });
    send(ws, configure);
    expect((await next('session.updated')).session).toMatchObject({
      audio: { input: { transcription: { model: 'm-rt', language: 'de' }, turn_detection: null } },
    });
    fake.scriptTranscripts('hello there');
    send(ws, { type: 'input_audio_buffer.append', audio: tonePcm(250, 24_000).toString('base64') });
    send(ws, { type: 'input_audio_buffer.commit' });
    const committed = await next('input_audio_buffer.committed');
    expect(committed).toMatchObject({ previous_item_id: null, item_id: expect.any(String) });
    const completed = await next('conversation.item.input_audio_transcription.completed');
    expect(completed).toMatchObject({ item_id: committed.item_id, transcript: 'hello there', usage: { type: 'duration' } });
    const deltas = events.filter((e) => e.type === 'conversation.item.input_audio_transcription.delta').map((e) => e.delta);
    expect(deltas.join('')).toBe('hello there');
    expect(fake.requests.at(-1)).toMatchObject({ endpoint: 'stt-stream', model: 'm-rt', language: 'de' });
    expect(fake.requests.at(-1)!.audioSeconds).toBeCloseTo(0.25, 3);
    // The next item follows the first.
    send(ws, { type: 'input_audio_buffer.append', audio: tonePcm(150, 24_000).toString('base64') });
    send(ws, { type: 'input_audio_buffer.commit' });
    expect((await next('input_audio_buffer.committed')).previous_item_id).toBe(committed.item_id);
    ws.close();
  });

  it('answers bad audio and an empty commit with error events naming the client event, and keeps the session', async () => {
    const { ws, next } = await connect();
    await next('session.created');
    send(ws, configure);
    await next('session.updated');
    send(ws, { type: 'input_audio_buffer.append', event_id: 'evt_bad', audio: 'not base64!' });
    expect((await next('error')).error).toMatchObject({
      type: 'invalid_request_error',
      code: 'invalid_value',
      param: 'audio',
      event_id: 'evt_bad',
    });
    send(ws, { type: 'input_audio_buffer.append', event_id: 'evt_odd', audio: Buffer.from([1, 2, 3]).toString('base64') });
    expect((await next('error')).error).toMatchObject({ code: 'invalid_value', event_id: 'evt_odd' });
    send(ws, { type: 'input_audio_buffer.commit', event_id: 'evt_empty' });
    const empty = (await next('error')).error as { code: string; message: string; event_id: string };
    expect(empty).toMatchObject({ code: 'input_audio_buffer_commit_empty', event_id: 'evt_empty' });
    expect(empty.message).toMatch(/at least 100ms/);
    send(ws, { type: 'input_audio_buffer.append', audio: tonePcm(200, 24_000).toString('base64') });
    send(ws, { type: 'input_audio_buffer.clear' });
    await next('input_audio_buffer.cleared');
    send(ws, { type: 'input_audio_buffer.commit' });
    expect(((await next('error')).error as { code: string }).code).toBe('input_audio_buffer_commit_empty');
    ws.close();
  });

  it('refuses a wrong key (401), a session without intent (400), injected statuses, and has no endpoint when told (404)', async () => {
    expect(await upgradeStatus('?intent=transcription', 'sk-wrong')).toBe(401);
    expect(await upgradeStatus('', KEY)).toBe(400);
    fake.failNext('stt-stream', { status: 503 });
    expect(await upgradeStatus('?intent=transcription', KEY)).toBe(503);
    expect(await upgradeStatus('?intent=transcription', KEY)).toBe(101);
    const batchOnly = await startFakeOpenAI({ realtime: false });
    try {
      const ws = new WebSocket(`${batchOnly.url.replace('http', 'ws')}/realtime?intent=transcription`);
      expect(await new Promise((resolve) => ws.on('unexpected-response', (_q, res) => resolve(res.statusCode)))).toBe(404);
    } finally {
      await batchOnly.close();
    }
  });
});

describe('latency profiles', () => {
  const post = (path: string, body: BodyInit, headers: Record<string, string> = {}) =>
    fetch(`${fake.url}${path}`, { method: 'POST', body, headers: { authorization: `Bearer ${KEY}`, ...headers } });

  it('delays batch STT in proportion to the audio, chat before the first token, TTS before the first byte', async () => {
    fake.setProfile({
      stt: { baseMs: 100, perAudioSecondMs: 200 },
      chat: { firstTokenMs: 250, perTokenMs: 5 },
      tts: { firstByteMs: 200, realtimeFactor: 2 },
    });
    try {
      const form = new FormData();
      form.set('model', 'm');
      form.set('file', new Blob([new Uint8Array(wavFromPcm16(tonePcm(1000, 16_000), 16_000))]), 'a.wav');
      let t0 = performance.now();
      expect((await post('/audio/transcriptions', form)).status).toBe(200);
      expect(performance.now() - t0).toBeGreaterThanOrEqual(290); // 100 + 200 x 1 s

      t0 = performance.now();
      const chat = await post(
        '/chat/completions',
        JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
        { 'content-type': 'application/json' },
      );
      await chat.body!.getReader().read();
      expect(performance.now() - t0).toBeGreaterThanOrEqual(240);
      await chat.text().catch(() => undefined);

      t0 = performance.now();
      const speech = await post('/audio/speech', JSON.stringify({ model: 'm', voice: 'v', input: 'A sentence.', response_format: 'pcm' }), {
        'content-type': 'application/json',
      });
      const reader = speech.body!.getReader();
      await reader.read();
      expect(performance.now() - t0).toBeGreaterThanOrEqual(190);
      // 0.44 s of tone at twice real time: about 0.22 s from the first byte to the last.
      const t1 = performance.now();
      while (!(await reader.read()).done);
      expect(performance.now() - t1).toBeGreaterThanOrEqual(180);
    } finally {
      fake.setProfile({});
    }
  });

  it("delays a realtime commit's completion by base + per audio second", async () => {
    fake.setProfile({ sttStream: { baseMs: 150, perAudioSecondMs: 100 } });
    try {
      const { ws, next } = await connect();
      await next('session.created');
      send(ws, configure);
      await next('session.updated');
      send(ws, { type: 'input_audio_buffer.append', audio: tonePcm(1000, 24_000).toString('base64') });
      send(ws, { type: 'input_audio_buffer.commit' });
      await next('input_audio_buffer.committed');
      const t0 = performance.now();
      await next('conversation.item.input_audio_transcription.completed');
      expect(performance.now() - t0).toBeGreaterThanOrEqual(230); // 150 + 100 x 1 s, less scheduling slack
      ws.close();
    } finally {
      fake.setProfile({});
    }
  });
});
