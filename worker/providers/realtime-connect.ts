import WebSocket from 'ws';
import type { RealtimeTranscriptionSessionCreateRequest, SessionUpdateEvent } from 'openai/resources/realtime/realtime';
import { redact } from '../../lib/log.ts';
import { readRealtimeEvent } from './answers.ts';
import { ProviderError } from './errors.ts';

/**
 * Opening a realtime transcription session (OpenAI's GA Realtime API over WebSocket):
 * upgrade to `<base>/realtime?intent=transcription` with the bearer key, send `session.update` at
 * once (PCM16 at 24 kHz, our transcription model, no server turn detection: we decide turns; not
 * waiting for `session.created` saves a round trip) and wait for `session.updated`. Every way this can fail ends
 * as a ProviderError: a refused key is `stt_error` (batch would fail the same way); anything else
 * is `unavailable`, and `permanent` says whether the provider simply has no such endpoint.
 */
export const REALTIME_SAMPLE_RATE = 24_000;

/** A stream that could not be opened: the turn falls back to batch transcription. */
export class StreamOpenError extends ProviderError {
  /** The provider has no realtime endpoint (or refuses our session): retrying will not help. */
  readonly permanent: boolean;

  constructor(message: string, permanent: boolean, status?: number) {
    super('stt', 'unavailable', false, message, status);
    this.permanent = permanent;
  }
}

/** The WebSocket address for an OpenAI-compatible base URL: https -> wss, http -> ws. */
export function realtimeUrl(baseURL: string): string {
  const url = new URL(baseURL);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/realtime`;
  url.search = '?intent=transcription';
  url.hash = '';
  return url.toString();
}

export function transcriptionSession(model: string, language?: string): RealtimeTranscriptionSessionCreateRequest {
  return {
    type: 'transcription',
    audio: {
      input: {
        format: { type: 'audio/pcm', rate: REALTIME_SAMPLE_RATE },
        transcription: { model, ...(language ? { language } : {}) },
        turn_detection: null,
      },
    },
  };
}

/** Statuses that mean "no realtime endpoint here" rather than "not now". */
const NO_ENDPOINT = new Set([400, 404, 405, 426, 501]);

export interface OpenSocketOptions {
  url: string;
  apiKey: string;
  model: string;
  language?: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Extra CA certificates to trust (NODE_EXTRA_CA_CERTS works too). */
  ca?: string | Buffer;
}

/** Resolves with an open socket whose session is configured; its later messages are the caller's. */
export function openRealtimeSocket(options: OpenSocketOptions): Promise<WebSocket> {
  const host = new URL(options.url).host;
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) return reject(new ProviderError('stt', 'aborted', false, 'The speech-to-text stream was cancelled.'));
    const socket = new WebSocket(options.url, {
      headers: { Authorization: `Bearer ${options.apiKey}` },
      handshakeTimeout: options.timeoutMs,
      perMessageDeflate: false,
      ...(options.ca ? { ca: options.ca } : {}),
    });
    let settled = false;
    const finish = (err: ProviderError | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      socket.off('message', onSetupMessage);
      if (!err) return resolve(socket);
      socket.removeAllListeners('close');
      socket.on('error', () => undefined); // a late socket error after we gave up is not news
      socket.terminate();
      reject(err);
    };
    const timer = setTimeout(
      () => finish(new StreamOpenError(`The realtime speech-to-text at ${host} did not open within ${options.timeoutMs / 1000} s.`, false)),
      options.timeoutMs,
    );
    const onAbort = () => finish(new ProviderError('stt', 'aborted', false, 'The speech-to-text stream was cancelled.'));
    options.signal?.addEventListener('abort', onAbort, { once: true });

    socket.on('unexpected-response', (req, res) => {
      const status = res.statusCode ?? 0;
      res.resume();
      req.destroy();
      if (status === 401 || status === 403)
        return finish(new ProviderError('stt', 'http', false, `The realtime speech-to-text refused the API key (HTTP ${status}).`, status));
      const permanent = NO_ENDPOINT.has(status);
      finish(
        new StreamOpenError(
          `The speech-to-text at ${host} ${permanent ? 'has no realtime transcription endpoint' : 'could not open a realtime stream'} (HTTP ${status}).`,
          permanent,
          status,
        ),
      );
    });
    socket.on('error', (err: Error & { code?: string }) => {
      finish(
        new StreamOpenError(`The realtime speech-to-text at ${host} could not be reached (${err.code ?? redact(err.message)}).`, false),
      );
    });
    socket.on('close', (code) =>
      finish(new StreamOpenError(`The realtime speech-to-text at ${host} closed the stream while it opened (code ${code}).`, false)),
    );

    const onSetupMessage = (data: WebSocket.RawData) => {
      const read = readRealtimeEvent(data.toString());
      // Checked first (answers.ts): a malformed event is a provider fault, not a refusal of our session.
      if (read.kind === 'malformed')
        return finish(new StreamOpenError(`The realtime speech-to-text at ${host} sent an unreadable event (${read.problem}).`, false));
      if (read.kind !== 'event') return;
      if (read.event.type === 'session.updated') {
        finish(null);
      } else if (read.event.type === 'error') {
        // The session we asked for is refused (an unknown model, no transcription sessions): configuration, not luck.
        finish(
          new StreamOpenError(
            `The realtime speech-to-text at ${host} refused the transcription session (${read.event.error.code ?? read.event.error.type ?? 'undescribed'}).`,
            true,
          ),
        );
      }
    };
    socket.on('message', onSetupMessage);
    socket.on('open', () => {
      const update: SessionUpdateEvent = { type: 'session.update', session: transcriptionSession(options.model, options.language) };
      socket.send(JSON.stringify(update));
    });
  });
}
