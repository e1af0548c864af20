import type { IncomingMessage, ServerResponse } from 'node:http';
import { Pcm16StreamResampler } from '../lib/pcm-stream.ts';
import { floatToPcm16 } from './audio.ts';
import { SpeechError } from './errors.ts';
import { readBody } from './http-io.ts';
import type { SpeechService } from './service.ts';
import { pieceCharsAt, textPieces } from './text-pieces.ts';

/**
 * POST /v1/audio/speech: OpenAI's speech endpoint with the Piper voice (any `voice` name is this
 * one voice). `response_format` pcm (24 kHz 16-bit mono little-endian, as OpenAI's) or wav (the
 * same samples in a WAV header whose sizes say "streamed"); the 22.05 kHz voice is resampled.
 * The text is spoken piece by piece (sentences, long ones cut: text-pieces.ts) and each is sent as
 * soon as it is made, so the first audio leaves after the first sentence, not after the whole
 * answer. Each piece takes its turn in the fair queue; once audio has been sent a failure can only
 * break the stream; a client that leaves stops it at the next piece.
 */
export const OUTPUT_RATE = 24_000;
const FORMATS = new Set(['pcm', 'wav']);
export const SPEECH_BODY_LIMIT = 256 * 1024;

export interface SpeechRouteOptions {
  service: SpeechService;
  /** The queue's fairness key (the caller's address). */
  client: string;
  maxTextChars: number;
}

interface SpeechRequest {
  model?: unknown;
  input?: unknown;
  voice?: unknown;
  response_format?: unknown;
  speed?: unknown;
}

function streamedWavHeader(sampleRate: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(0xffffffff, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(0xffffffff, 40);
  return header;
}

function parseRequest(body: Buffer, maxTextChars: number): { input: string; format: string; speed: number } {
  let json: SpeechRequest;
  try {
    json = JSON.parse(body.toString('utf8')) as SpeechRequest;
  } catch {
    throw new SpeechError(400, 'invalid_json', 'The body must be a JSON object with model, input and voice.');
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json))
    throw new SpeechError(400, 'invalid_json', 'The body must be a JSON object with model, input and voice.');
  if (typeof json.model !== 'string' || json.model.trim() === '')
    throw new SpeechError(400, 'invalid_request', 'The field model is required.', { param: 'model' });
  if (typeof json.voice !== 'string' || json.voice.trim() === '')
    throw new SpeechError(400, 'invalid_request', 'The field voice is required.', { param: 'voice' });
  if (typeof json.input !== 'string' || json.input.trim() === '')
    throw new SpeechError(400, 'invalid_request', 'The field input is required (the text to speak).', { param: 'input' });
  if (json.input.length > maxTextChars)
    throw new SpeechError(400, 'string_above_max_length', `input is ${json.input.length} characters; at most ${maxTextChars}.`, {
      param: 'input',
    });
  const format = json.response_format ?? 'mp3';
  if (typeof format !== 'string' || !FORMATS.has(format)) {
    throw new SpeechError(
      400,
      'unsupported_format',
      `response_format ${JSON.stringify(format).slice(0, 40)} is not served here; ask for pcm or wav.`,
      { param: 'response_format' },
    );
  }
  const speed = json.speed ?? 1;
  if (typeof speed !== 'number' || !Number.isFinite(speed) || speed < 0.25 || speed > 4)
    throw new SpeechError(400, 'invalid_value', 'speed must be a number from 0.25 to 4.', { param: 'speed' });
  return { input: json.input, format, speed };
}

export async function handleSpeech(
  req: IncomingMessage,
  res: ServerResponse,
  session: string,
  signal: AbortSignal,
  options: SpeechRouteOptions,
): Promise<void> {
  const { input, format, speed } = parseRequest(await readBody(req, SPEECH_BODY_LIMIT), options.maxTextChars);
  const parts = textPieces(input, pieceCharsAt(speed));
  if (parts.length === 0)
    throw new SpeechError(400, 'invalid_request', 'input holds nothing to say (no letters or digits).', { param: 'input' });
  const resampler = new Pcm16StreamResampler(options.service.voiceRate, OUTPUT_RATE);
  for (const [i, piece] of parts.entries()) {
    // A client that left stops the synthesis here: its next piece is never queued.
    const samples = await options.service.synthesize(session, piece, { client: options.client, speed, signal });
    if (signal.aborted) return;
    if (i === 0) {
      res.writeHead(200, { 'content-type': format === 'wav' ? 'audio/wav' : 'audio/pcm', 'transfer-encoding': 'chunked' });
      if (format === 'wav') res.write(streamedWavHeader(OUTPUT_RATE));
    }
    // One piece's audio at a time: a client that reads slowly holds the next piece back, so the
    // request never holds more than a piece (and what the socket buffers).
    if (!res.write(resampler.push(floatToPcm16(samples)))) await drained(res, signal);
  }
  res.end();
}

function drained(res: ServerResponse, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    res.once('drain', done);
    signal.addEventListener('abort', done, { once: true });
  });
}
