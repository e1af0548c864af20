import { silentLogger, type Logger } from '../../lib/log.ts';
import type { StreamingSpeechToText, TranscriptionStream } from '../bot/turns/types.ts';
import { ProviderError } from './errors.ts';
import type { CallPolicy } from './policy.ts';
import { openRealtimeSocket, realtimeUrl, StreamOpenError } from './realtime-connect.ts';
import { RealtimeTranscriptionStream } from './realtime-stream.ts';

/**
 * Streaming speech-to-text over OpenAI's realtime transcription (docs/worker.md, "Streaming
 * speech-to-text"). The pipeline opens one stream per listening session; when it cannot be opened
 * `openStream` rejects with reason `stt_stream_unavailable` and the pipeline transcribes that turn
 * with the batch endpoint. The process remembers the outcome, so turns do not each pay a failed
 * connect: a provider without the endpoint (HTTP 404/400/405/426/501 on upgrade, or a refused
 * session) is not asked again; an outage (refused, TLS, timeout, other statuses) is tried again after
 * a back-off that starts short and doubles up to a minute.
 */
export interface RealtimeSpeechToTextOptions {
  /** The STT base URL (STT_BASE_URL, https://... or http://...). */
  baseURL: string;
  apiKey: string;
  /** The transcription model of the session (STT_REALTIME_MODEL). */
  model: string;
  /** The name on spans and metrics, see providerName(). */
  provider: string;
  /** `timeoutMs` bounds each commit; streams are never retried, batch is the fallback. */
  policy: CallPolicy;
  /** Bound on opening a stream (default: the policy's timeout, at most OPEN_TIMEOUT_MS). */
  openTimeoutMs?: number;
  /** Audio per append event (default 80 ms: four 20 ms frames per JSON event). */
  batchMs?: number;
  /** Extra CA certificates (NODE_EXTRA_CA_CERTS is honoured anyway). */
  ca?: string | Buffer;
  logger?: Logger;
  now?: () => number;
}

/**
 * A server that takes the upgrade but never starts a session should not hold the interview for the
 * whole provider timeout (20 s by default): a healthy open is one round trip or two.
 */
export const OPEN_TIMEOUT_MS = 5000;
/**
 * How long an outage (not a missing endpoint) keeps turns on the batch path before we try again: the
 * first wait is short, because a refused connection is often a speech Service that came up a moment
 * ago (its endpoints and the node's rules lag the Deployment); each failure in a row doubles it, up to
 * a minute, so a real outage costs one failed connect a minute at most.
 */
export const STREAM_RETRY_FIRST_MS = 2000;
export const STREAM_RETRY_AFTER_MS = 60_000;

export class OpenAIRealtimeSpeechToText implements StreamingSpeechToText {
  readonly provider: string;
  readonly model: string;
  private readonly options: RealtimeSpeechToTextOptions;
  private readonly url: string;
  private readonly log: Logger;
  private readonly now: () => number;
  private unavailable: { until: number; error: StreamOpenError } | null = null;
  /** The back-off after the next outage; back to the first wait after an open succeeds. */
  private nextRetryMs = STREAM_RETRY_FIRST_MS;

  constructor(options: RealtimeSpeechToTextOptions) {
    this.options = options;
    this.provider = options.provider;
    this.model = options.model;
    this.url = realtimeUrl(options.baseURL);
    this.log = options.logger ?? silentLogger;
    this.now = options.now ?? Date.now;
  }

  /** How turns are transcribed now: `batch` while the stream is known to be unavailable (a metric label). */
  get mode(): 'realtime' | 'batch' {
    return this.unavailable && this.now() < this.unavailable.until ? 'batch' : 'realtime';
  }

  async openStream(options: { sampleRate: number; language?: string; signal?: AbortSignal }): Promise<TranscriptionStream> {
    const known = this.unavailable;
    if (known && this.now() < known.until) throw new StreamOpenError(known.error.message, known.error.permanent, known.error.status);
    try {
      const socket = await openRealtimeSocket({
        url: this.url,
        apiKey: this.options.apiKey,
        model: this.model,
        timeoutMs: this.options.openTimeoutMs ?? Math.min(this.options.policy.timeoutMs, OPEN_TIMEOUT_MS),
        ...(options.language ? { language: options.language } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
        ...(this.options.ca ? { ca: this.options.ca } : {}),
      });
      if (this.unavailable) this.log.info('realtime speech-to-text is available again', { provider: this.provider, model: this.model });
      this.unavailable = null;
      this.nextRetryMs = STREAM_RETRY_FIRST_MS;
      const stream = new RealtimeTranscriptionStream({
        socket,
        inputRate: options.sampleRate,
        timeoutMs: this.options.policy.timeoutMs,
        batchMs: this.options.batchMs ?? 80,
      });
      options.signal?.addEventListener('abort', () => stream.close(), { once: true });
      return stream;
    } catch (err) {
      if (err instanceof StreamOpenError) this.remember(err);
      throw err instanceof ProviderError
        ? err
        : new ProviderError('stt', 'bad_response', false, 'The realtime speech-to-text failed to open.');
    }
  }

  private remember(err: StreamOpenError): void {
    const first = this.unavailable === null;
    const waitMs = this.nextRetryMs;
    if (!err.permanent) this.nextRetryMs = Math.min(waitMs * 2, STREAM_RETRY_AFTER_MS);
    this.unavailable = { until: err.permanent ? Infinity : this.now() + waitMs, error: err };
    // Logged once per change, not per turn: each turn would say the same.
    if (first) {
      this.log.warn('realtime speech-to-text unavailable; turns use batch transcription', {
        provider: this.provider,
        model: this.model,
        reason: err.message,
        retryAfterSeconds: err.permanent ? null : waitMs / 1000,
      });
    }
  }
}
