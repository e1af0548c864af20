import { connect } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resamplePcm16, wavFromPcm16 } from '../../lib/pcm.ts';
import { readWavPcm, speakWithPiper, SPEECH_RATE } from '../harness/speech.ts';
import { startSpeechServer, type SpeechServerHandle } from '../harness/speech-server.ts';
import { SPOKEN_ANSWERS } from '../harness/spoken-answers.ts';

/**
 * Property: whatever a client sends the speech server process (any upload, any speech request,
 * any sequence of realtime events or frames, a request that never finishes, a session that goes
 * quiet, or one that waits for its transcripts longer than the idle timeout), the answer is a 2xx or a 4xx in the
 * OpenAI error shape, never a 500, and the process
 * stays up and keeps serving. Fixed seeds; small audio, so that runs stay short on a busy machine.
 */
let server: SpeechServerHandle;
const SEED = 20_261_125;

beforeAll(async () => {
  server = await startSpeechServer(
    { SPEECH_REQUEST_TIMEOUT_SECONDS: '2', SPEECH_IDLE_TIMEOUT_SECONDS: '2', SPEECH_MAX_AUDIO_SECONDS: '2', SPEECH_MAX_TEXT_CHARS: '60' },
    join(mkdtempSync(join(tmpdir(), 'speech-fuzz-')), 'logs'),
  );
}, 300_000);

afterAll(async () => {
  await server?.stop();
});

async function expectAlive(): Promise<void> {
  expect(server.process.proc.exitCode, server.process.output().slice(-2000)).toBeNull();
  expect((await fetch(server.metricsUrl.replace('/metrics', '/healthz'))).status).toBe(200);
}

/** A non-2xx answer must be a 4xx with `{error: {message, type, code}}`. */
async function expectClientAnswer(res: Response): Promise<void> {
  const body = await res.text();
  if (res.status < 300) return;
  expect(res.status, body).toBeGreaterThanOrEqual(400);
  expect(res.status, body).toBeLessThan(500);
  const json = JSON.parse(body) as { error: { message: unknown; type: unknown; code: unknown } };
  expect(typeof json.error.message).toBe('string');
  expect(json.error.type).toBe('invalid_request_error');
  expect(typeof json.error.code).toBe('string');
}

const auth = () => ({ authorization: `Bearer ${server.token}` });

/** A WAV-ish file: a real header with arbitrary fields, or arbitrary bytes. */
const wavArb = fc.oneof(
  fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
  fc
    .record({
      rate: fc.oneof(fc.constantFrom(8000, 16_000, 24_000, 48_000), fc.integer({ min: 0, max: 200_000 })),
      channels: fc.integer({ min: 0, max: 12 }),
      samples: fc.integer({ min: 0, max: 3000 }),
      bits: fc.constantFrom(8, 16, 24, 32),
    })
    .map(({ rate, channels, samples, bits }) => {
      const wav = wavFromPcm16(Buffer.alloc(samples * 2, 7), Math.max(1, rate));
      wav.writeUInt16LE(channels, 22);
      wav.writeUInt32LE(rate, 24);
      wav.writeUInt16LE(bits, 34);
      return wav;
    }),
);

describe('the speech server under arbitrary input', () => {
  it('batch transcription: arbitrary files and form fields get 200 or a 4xx, never a 500', async () => {
    await fc.assert(
      // Mostly valid fields, so that most files reach the decoder.
      fc.asyncProperty(
        wavArb,
        fc.oneof(fc.constant('whisper-1'), fc.constant('whisper-1'), fc.constant(null), fc.string({ maxLength: 20 })),
        fc.oneof(fc.constant(null), fc.constant(null), fc.constantFrom('json', 'text'), fc.string({ maxLength: 12 })),
        fc.oneof(fc.constant(null), fc.constant('en'), fc.string({ maxLength: 8 })),
        async (file, model, format, language) => {
          const form = new FormData();
          if (model !== null) form.set('model', model);
          if (format !== null) form.set('response_format', format);
          if (language !== null) form.set('language', language);
          form.set('file', new Blob([new Uint8Array(file)]), 'f.wav');
          await expectClientAnswer(await fetch(`${server.url}/audio/transcriptions`, { method: 'POST', headers: auth(), body: form }));
        },
      ),
      { seed: SEED, numRuns: 60 },
    );
    // Not multipart at all, and a body past the limit.
    await expectClientAnswer(
      await fetch(`${server.url}/audio/transcriptions`, {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'application/json' },
        body: '{}',
      }),
    );
    const huge = await fetch(`${server.url}/audio/transcriptions`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'multipart/form-data; boundary=x' },
      body: new Uint8Array(2 * 1024 * 1024),
    });
    expect(huge.status).toBe(413);
    await expectAlive();
  }, 600_000);

  it('speech: arbitrary JSON bodies get audio or a 4xx, never a 500', async () => {
    const text = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.string({ unit: 'grapheme', maxLength: 30 }),
      fc.constantFrom('', '...', '12:30 p.m. on 3/4', '😀 ok', 'a\u0000b', 'x'.repeat(61)),
    );
    const body = fc.oneof(
      // Mostly valid fields around the text, so that most inputs reach the voice.
      fc
        .record(
          {
            model: fc.oneof(fc.constant('tts-1'), fc.constant('tts-1'), fc.string({ maxLength: 8 })),
            voice: fc.oneof(fc.constant('alloy'), fc.constant('alloy'), fc.string({ maxLength: 8 })),
            input: fc.oneof(text, text, text, fc.integer()),
            response_format: fc.constantFrom('pcm', 'pcm', 'wav', 'mp3', '', 'PCM'),
            speed: fc.oneof(fc.constant(1), fc.constant(1), fc.double()),
          },
          { requiredKeys: ['input'] },
        )
        .map((o) => JSON.stringify(o)),
      fc.json(),
      fc.string({ maxLength: 50 }),
    );
    await fc.assert(
      fc.asyncProperty(body, async (raw) => {
        await expectClientAnswer(
          await fetch(`${server.url}/audio/speech`, {
            method: 'POST',
            headers: { ...auth(), 'content-type': 'application/json' },
            body: raw,
          }),
        );
      }),
      { seed: SEED, numRuns: 40 },
    );
    await expectAlive();
  }, 600_000);

  it('realtime: arbitrary event sequences get events back, and the session still works after them', async () => {
    const event = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.json(),
      fc
        .record(
          {
            type: fc.constantFrom(
              'session.update',
              'input_audio_buffer.append',
              'input_audio_buffer.commit',
              'input_audio_buffer.clear',
              'response.create',
              42,
            ),
            event_id: fc.option(fc.oneof(fc.string({ maxLength: 10 }), fc.integer())),
            audio: fc.option(fc.oneof(fc.base64String({ maxLength: 400 }), fc.string({ maxLength: 20 }), fc.integer())),
            session: fc.option(
              fc.oneof(
                fc.json(),
                fc.record(
                  {
                    type: fc.constantFrom('transcription', 'realtime'),
                    audio: fc.record({
                      input: fc.record(
                        {
                          format: fc.record({ type: fc.constantFrom('audio/pcm', 'audio/pcmu'), rate: fc.constantFrom(24_000, 16_000) }),
                          transcription: fc.option(
                            fc.record({ model: fc.string({ maxLength: 5 }), language: fc.constantFrom('en', 'de', 'en-US') }),
                          ),
                          turn_detection: fc.constantFrom(null, { type: 'server_vad' }),
                        },
                        { requiredKeys: [] },
                      ),
                    }),
                  },
                  { requiredKeys: ['type'] },
                ),
              ),
            ),
          },
          { requiredKeys: ['type'] },
        )
        .map((o) => JSON.stringify(o)),
      fc.uint8Array({ maxLength: 30 }).map((b) => Buffer.from(b)),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(event, { maxLength: 12 }), async (events) => {
        const ws = await openSession();
        const received: Array<{ type: string }> = [];
        ws.on('message', (d) => received.push(JSON.parse(d.toString()) as { type: string }));
        for (const e of events) ws.send(e, { binary: Buffer.isBuffer(e) });
        // The session survived whatever came before: a proper update is still answered.
        ws.send(
          JSON.stringify({
            type: 'session.update',
            session: {
              type: 'transcription',
              audio: { input: { format: { type: 'audio/pcm', rate: 24_000 }, transcription: { model: 'm' }, turn_detection: null } },
            },
          }),
        );
        await until(() => received.filter((r) => r.type === 'session.updated').length > 0, 'session.updated after the arbitrary events');
        expect(received.every((r) => typeof r.type === 'string')).toBe(true);
        ws.close();
      }),
      { seed: SEED, numRuns: 40 },
    );
    await expectAlive();
  }, 600_000);

  it('a request whose body never finishes is answered 408; a quiet realtime session is closed with an error event', async () => {
    const answer = await new Promise<string>((resolve) => {
      const socket = connect(Number(new URL(server.url).port), '127.0.0.1');
      let text = '';
      socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(text));
      socket.write(
        `POST /v1/audio/speech HTTP/1.1\r\nHost: speech\r\nAuthorization: Bearer ${server.token}\r\nContent-Type: ` +
          `application/json\r\nContent-Length: 1000\r\n\r\n{"model":`,
      );
    });
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(answer).toContain('"code":"request_timeout"');

    const ws = await openSession();
    const received: Array<{ type: string; error?: { code: string } }> = [];
    ws.on('message', (d) => received.push(JSON.parse(d.toString()) as { type: string }));
    const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
    expect(await closed).toBe(1000);
    expect(received.find((r) => r.type === 'error')?.error?.code).toBe('session_idle');
    await expectAlive();
  }, 120_000);

  it(
    'a session waiting for its transcripts is not idle: decodes that outlast the idle timeout all arrive, and only then is the quiet ' +
      'session closed',
    async () => {
      // Twelve commits of 1.9 s of speech each (the server takes at most 2 s per buffer here): about
      // 23 s of audio, decoded one after another for several seconds (8 s at Moonshine's real-time
      // factor of 0.35 here, 2.3 s even at 0.1), while the client, having said everything, sends nothing for longer than the
      // 2 s idle timeout.
      const dir = mkdtempSync(join(tmpdir(), 'speech-fuzz-owed-'));
      const file = join(dir, 'answer.wav');
      speakWithPiper([{ text: SPOKEN_ANSWERS[0]!, file }]);
      const speech = resamplePcm16(readWavPcm(file).pcm, SPEECH_RATE, 24_000).subarray(0, Math.round(1.9 * 24_000) * 2);
      const COMMITS = 12;
      const ws = await openSession();
      const received: Array<{ type: string; error?: { code: string } }> = [];
      ws.on('message', (d) => received.push(JSON.parse(d.toString()) as { type: string }));
      const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
      ws.send(
        JSON.stringify({
          type: 'session.update',
          session: {
            type: 'transcription',
            audio: { input: { format: { type: 'audio/pcm', rate: 24_000 }, transcription: { model: 'm' }, turn_detection: null } },
          },
        }),
      );
      for (let i = 0; i < COMMITS; i++) {
        for (let at = 0; at < speech.length; at += 4800)
          ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: speech.subarray(at, at + 4800).toString('base64') }));
        ws.send(JSON.stringify({ type: 'input_audio_buffer.commit' }));
      }
      expect(await closed).toBe(1000);
      const types = received.map((r) => (r.type === 'error' ? `error:${r.error?.code}` : r.type));
      expect(
        types.filter((t) => t === 'conversation.item.input_audio_transcription.completed'),
        types.join(' '),
      ).toHaveLength(COMMITS);
      expect(
        types.filter((t) => t.startsWith('error:')),
        types.join(' '),
      ).toEqual(['error:session_idle']);
      expect(types.indexOf('error:session_idle')).toBeGreaterThan(
        types.lastIndexOf('conversation.item.input_audio_transcription.completed'),
      );
      await expectAlive();
    },
    300_000,
  );

  it('a realtime client that stops reading is disconnected, and the server goes on', async () => {
    const before = await server.metric('speech_realtime_sessions');
    const ws = await openSession();
    expect(await server.metric('speech_realtime_sessions')).toBe(before + 1);
    ws.pause(); // stop reading: the server's answers pile up on its side
    // Each of these earns an error event of ~450 bytes (it echoes the type and the event id):
    // about 18 MiB in all, more than the sockets' buffers on both sides hold.
    const junk = JSON.stringify({ type: 'x'.repeat(80), event_id: 'y'.repeat(128) });
    for (let i = 0; i < 40_000; i++) ws.send(junk);
    // Well inside the 30 s that a closing handshake with a client that does not read would take
    // (the idle timeout would end the session that way): this is the server giving up on it.
    const deadline = Date.now() + 20_000;
    while ((await server.metric('speech_realtime_sessions')) > before) {
      if (Date.now() > deadline) throw new Error('the server kept a client that does not read');
      await new Promise((r) => setTimeout(r, 100));
    }
    ws.terminate();
    await expectAlive();
    const fresh = await openSession(); // new sessions still open
    fresh.close();
  }, 120_000);
});

function openSession(): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${server.url.replace('http', 'ws')}/realtime?intent=transcription`, { headers: auth() });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

async function until(probe: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
