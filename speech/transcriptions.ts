import type { IncomingMessage, ServerResponse } from 'node:http';
import { decodeUpload } from './audio.ts';
import { SpeechError } from './errors.ts';
import { readBody, sendJson } from './http-io.ts';
import type { SpeechService } from './service.ts';

/**
 * POST /v1/audio/transcriptions: OpenAI's batch transcription, multipart/form-data with `file`
 * (16-bit PCM WAV) and `model` (any name: this server has one recogniser, and says which in
 * docs/speech.md). `language` is accepted, and only English is recognised. Answers `{text}`
 * for `response_format` json (the default) or the bare text for `text`.
 */
const FORMATS = new Set(['json', 'text']);

export interface TranscriptionRouteOptions {
  service: SpeechService;
  /** The queue's fairness key (the caller's address). */
  client: string;
  maxAudioSeconds: number;
  /** Body limit: the longest audio at 48 kHz with 8 channels plus the form's overhead. */
  maxBodyBytes: number;
}

export async function handleTranscription(
  req: IncomingMessage,
  res: ServerResponse,
  session: string,
  signal: AbortSignal,
  options: TranscriptionRouteOptions,
): Promise<void> {
  // Read and decoded in a function of its own: the body and the form are garbage once it returns,
  // not held while the samples wait in the queue.
  const { samples, format } = await readUpload(req, options);
  const { text } = await options.service.transcribe(session, samples, { client: options.client, endpoint: 'transcriptions', signal });
  if (format === 'text') {
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(text);
    return;
  }
  sendJson(res, 200, { text });
}

async function readUpload(req: IncomingMessage, options: TranscriptionRouteOptions): Promise<{ samples: Float32Array; format: string }> {
  const type = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data\s*;/i.test(type))
    throw new SpeechError(400, 'invalid_request', 'Send the audio as multipart/form-data with the fields file and model.');
  const body = await readBody(req, options.maxBodyBytes);
  let form: FormData;
  try {
    form = await new Request('http://speech/', {
      method: 'POST',
      headers: { 'content-type': type },
      // A Buffer is a Uint8Array, which fetch's Request takes as it is (the DOM lib's BodyInit type does not say so).
      body: body as unknown as BodyInit,
    }).formData();
  } catch {
    throw new SpeechError(400, 'invalid_request', 'The multipart body could not be parsed.');
  }
  const model = form.get('model');
  const file = form.get('file');
  if (typeof model !== 'string' || model.trim() === '')
    throw new SpeechError(400, 'invalid_request', 'The field model is required.', { param: 'model' });
  if (!(file instanceof Blob)) throw new SpeechError(400, 'invalid_request', 'The field file is required (a WAV file).', { param: 'file' });
  const format = form.get('response_format') ?? 'json';
  if (typeof format !== 'string' || !FORMATS.has(format))
    throw new SpeechError(
      400,
      'invalid_value',
      `response_format must be json or text, got ${JSON.stringify(String(format)).slice(0, 40)}.`,
      { param: 'response_format' },
    );
  const language = form.get('language');
  if (language !== null && (typeof language !== 'string' || !/^en(-[A-Za-z]{2})?$/i.test(language))) {
    throw new SpeechError(400, 'unsupported_language', 'This server recognises English only (language en).', { param: 'language' });
  }
  const { samples } = decodeUpload(Buffer.from(await file.arrayBuffer()), options.maxAudioSeconds);
  return { samples, format };
}
