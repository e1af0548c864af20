import { mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSpeechServer, type SpeechServerHandle } from '../harness/speech-server.ts';
import { multipartWav, waveFile } from './upload-bodies.ts';

/**
 * Uploads to the real speech server process (issue 41): refused on their headers, before their
 * bodies are read, when the caller is not authenticated (401) or the queue is full (503); the
 * queue is fair between callers' addresses, not their connections; WAV files that are not integer
 * PCM are refused; a client that leaves mid-upload is no fault of the server's; the largest upload
 * documented as valid (8 channels at 48 kHz for the longest audio) is taken and answered.
 * Capacity 3 here, so that one client fills the queue with a few short uploads.
 */
let server: SpeechServerHandle;
const CAPACITY = 3;

beforeAll(async () => {
  server = await startSpeechServer({ SPEECH_QUEUE_CAPACITY: String(CAPACITY) }, join(mkdtempSync(join(tmpdir(), 'uploads-')), 'logs'));
}, 300_000);

afterAll(async () => {
  await server?.stop();
});

const port = () => Number(new URL(server.url).port);

/** An upload over node:http (its own connection), from `localAddress`; the status, or 'reset' when the connection broke first. */
function upload(file: Buffer, localAddress = '127.0.0.1'): Promise<{ status: number | 'reset'; body: string; at: number }> {
  const { body, headers } = multipartWav(file);
  return new Promise((resolve) => {
    const req = request({
      host: '127.0.0.1',
      port: port(),
      path: '/v1/audio/transcriptions',
      method: 'POST',
      localAddress,
      agent: false,
      headers: { authorization: `Bearer ${server.token}`, ...headers },
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body: text, at: performance.now() }));
    });
    req.on('error', () => resolve({ status: 'reset', body: '', at: performance.now() }));
    req.end(body);
  });
}

/** Sends only a request's head (and `bodyBytes` of its body) on a raw socket: the answer that comes without the rest, if any within `waitMs`. */
function headOnly(head: string, bodyBytes: number, waitMs: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port(), '127.0.0.1');
    let text = '';
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.on('error', () => undefined);
    const timer = setTimeout(() => socket.destroy(), waitMs);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(text);
    });
    socket.write(head);
    if (bodyBytes > 0) socket.write(Buffer.alloc(bodyBytes));
  });
}

const head = (auth: boolean, length: number) =>
  `POST /v1/audio/transcriptions HTTP/1.1\r\nHost: speech\r\n${auth ? `Authorization: Bearer ${server.token}\r\n` : ''}Content-Type: ` +
  `multipart/form-data; boundary=x\r\nContent-Length: ${length}\r\n\r\n`;

describe('uploads are refused before their bodies are read', () => {
  it('an unauthenticated upload that declares 10 GiB is answered 401 at once, without its body', async () => {
    const answer = await headOnly(head(false, 10 * 2 ** 30), 64 * 1024, 15_000);
    expect(answer).toMatch(/^HTTP\/1\.1 401/);
    expect(answer).toContain('"code":"invalid_api_key"');
  }, 60_000);

  it(
    'fairness is per client address: one client on many connections neither fills the queue against another nor holds it back; its own ' +
      'next upload is refused 503 before its body is read',
    async () => {
      const rejectedBefore = await server.metric('speech_rejected_total', { lane: 'stt' });
      // Client A (127.0.0.1): six uploads of 4 s on six connections; one runs, three wait, the rest are refused.
      const a = Array.from({ length: 6 }, () => upload(waveFile({ seconds: 4, rate: 16_000, channels: 1 })));
      const deadline = Date.now() + 60_000;
      while ((await server.metric('speech_queue_depth', { lane: 'stt' })) < CAPACITY) {
        if (Date.now() > deadline) throw new Error('client A never filled the queue');
        await new Promise((r) => setTimeout(r, 20));
      }
      // A's next upload is refused on its head: the 5 MB it declares are never sent.
      const refused = await headOnly(head(true, 5 * 2 ** 20), 0, 15_000);
      expect(refused).toMatch(/^HTTP\/1\.1 503/);
      expect(refused.toLowerCase()).toContain('retry-after: 1');
      expect(refused).toContain('"code":"server_overloaded"');
      // Client B (127.0.0.2), one connection, a 1 s upload: taken, in place of A's newest.
      const b = await upload(waveFile({ seconds: 1, rate: 16_000, channels: 1 }), '127.0.0.2');
      expect(b.status, b.body).toBe(200);
      const answersA = await Promise.all(a);
      const doneA = answersA.filter((r) => r.status === 200);
      expect(doneA.length, JSON.stringify(answersA)).toBeGreaterThanOrEqual(2);
      // B waited for at most A's running upload and the one next in the round, not for all of A's.
      expect(b.at).toBeLessThan(Math.max(...doneA.map((r) => r.at)));
      expect(
        answersA.every((r) => r.status === 200 || r.status === 503),
        JSON.stringify(answersA),
      ).toBe(true);
      expect(await server.metric('speech_rejected_total', { lane: 'stt' })).toBeGreaterThanOrEqual(
        rejectedBefore + 1 + answersA.filter((r) => r.status === 503).length,
      );
    },
    300_000,
  );
});

describe('upload contents and clients', () => {
  it.each([
    ['IEEE float', 3],
    ['MP3', 0x55],
    ['A-law', 6],
    ['extensible', 0xfffe],
  ])(
    'a WAV file with the %s format tag is refused with invalid_audio',
    async (_name, formatTag) => {
      const answer = await upload(waveFile({ seconds: 1, rate: 16_000, channels: 1, formatTag }));
      expect(answer.status, answer.body).toBe(400);
      expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'invalid_audio', param: 'file' } });
    },
    60_000,
  );

  it('a client that leaves mid-upload is counted as aborted, not as a 500, and is not logged as an error', async () => {
    const errorsBefore = await server.metric('speech_requests_total', { endpoint: 'transcriptions', outcome: '500' });
    const abortedBefore = await server.metric('speech_requests_total', { endpoint: 'transcriptions', outcome: 'aborted' });
    const logBefore = server.process.output().length;
    await new Promise<void>((resolve) => {
      const socket = connect(port(), '127.0.0.1', () => {
        socket.write(head(true, 2 * 2 ** 20));
        socket.write(Buffer.alloc(256 * 1024), () => setTimeout(() => (socket.destroy(), resolve()), 200));
      });
      socket.on('error', () => undefined);
    });
    const deadline = Date.now() + 15_000;
    while ((await server.metric('speech_requests_total', { endpoint: 'transcriptions', outcome: 'aborted' })) === abortedBefore) {
      if (Date.now() > deadline) throw new Error(`the aborted upload was not counted: ${server.process.output().slice(logBefore)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await server.metric('speech_requests_total', { endpoint: 'transcriptions', outcome: '500' })).toBe(errorsBefore);
    expect(server.process.output().slice(logBefore)).not.toContain('"level":"error"');
  }, 60_000);

  it('8 channels at 48 kHz are valid up to the longest audio: 7.5 s and 30 s are transcribed, and the client reads the answer', async () => {
    for (const seconds of [7.5, 30]) {
      const answer = await upload(waveFile({ seconds, rate: 48_000, channels: 8 }));
      expect(answer.status, `${seconds} s: ${answer.body}`).toBe(200);
      expect(typeof (JSON.parse(answer.body) as { text: unknown }).text).toBe('string');
    }
  }, 300_000);
});
