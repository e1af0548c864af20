import type { StreamingSpeechToText, TranscriptionStream } from '../bot/turns/types.ts';
import { ProviderError } from './errors.ts';
import { MIN_COMMIT_MS } from './realtime-stream.ts';
import type { SpeechToText } from './stt.ts';

/**
 * The listening pipeline's one transcription stream, whatever the provider can do: realtime when
 * it can (STT_MODE=realtime and the stream opens), batch otherwise, decided per turn. It keeps the
 * current utterance's audio (the pipeline bounds it by MAX_UTTERANCE_SECONDS), so a turn whose
 * realtime commit fails for any reason but cancellation is transcribed again by the batch endpoint
 * instead of failing the session. A stream the server closed is reopened at the next utterance
 * (the provider's memory keeps a provider without the endpoint on batch without asking again).
 */
export type TranscriptionPath = 'realtime' | 'batch';

export interface TranscriptionOptions {
  sampleRate: number;
  language?: string;
  signal?: AbortSignal;
  /** A turn goes to batch: `reason` is the error's reason (`stt_stream_unavailable`, `stt_timeout`, ...). For a metric and a log line. */
  onFallback?: (reason: string) => void;
}

export interface ResilientTranscriptionStream extends TranscriptionStream {
  /** Where the next commit goes now. */
  readonly path: TranscriptionPath;
}

export async function openTranscription(
  providers: { stt: SpeechToText; sttStream: StreamingSpeechToText | null },
  options: TranscriptionOptions,
): Promise<ResilientTranscriptionStream> {
  const stream = new FallbackTranscriptionStream(providers.stt, providers.sttStream, options);
  await stream.reopen();
  if (options.signal?.aborted) {
    stream.close();
    throw new ProviderError('stt', 'aborted', false, 'The speech-to-text stream was cancelled.');
  }
  return stream;
}

class FallbackTranscriptionStream implements ResilientTranscriptionStream {
  private realtime: TranscriptionStream | null = null;
  private opening: Promise<void> | null = null;
  /** Why the last open failed: the reason a turn then goes to batch. */
  private openFailure = 'stt_stream_unavailable';
  private utterance: Buffer[] = [];
  private utteranceBytes = 0;
  private closed = false;
  private readonly batch: SpeechToText;
  private readonly streaming: StreamingSpeechToText | null;
  private readonly options: TranscriptionOptions;

  constructor(batch: SpeechToText, streaming: StreamingSpeechToText | null, options: TranscriptionOptions) {
    this.batch = batch;
    this.streaming = streaming;
    this.options = options;
  }

  get path(): TranscriptionPath {
    return this.realtime ? 'realtime' : 'batch';
  }

  get interim(): string {
    return this.realtime?.interim ?? '';
  }

  append(pcm: Buffer): void {
    if (this.closed || pcm.length === 0) return;
    this.utterance.push(pcm);
    this.utteranceBytes += pcm.length;
    this.realtime?.append(pcm);
  }

  async commit(): Promise<string> {
    if (this.closed) throw new ProviderError('stt', 'aborted', false, 'The speech-to-text stream was closed.');
    const audio = Buffer.concat(this.utterance, this.utteranceBytes);
    this.utterance = [];
    this.utteranceBytes = 0;
    const realtime = this.realtime;
    if (!realtime) {
      if (!this.streaming) return this.transcribe(audio, null); // STT_MODE=batch: exactly as before streaming existed
      void this.reopen();
      return this.transcribe(audio, this.openFailure);
    }
    try {
      return await realtime.commit();
    } catch (err) {
      const failure = err instanceof ProviderError ? err : new ProviderError('stt', 'bad_response', false, 'The speech-to-text stream failed.');
      if (failure.kind === 'aborted' || this.closed) throw failure;
      if (failure.kind === 'network' && this.realtime === realtime) {
        this.realtime = null; // the socket is gone: later turns use a new one
        void this.reopen();
      }
      return this.transcribe(audio, failure.reason);
    }
  }

  clear(): void {
    this.utterance = [];
    this.utteranceBytes = 0;
    this.realtime?.clear();
  }

  close(): void {
    this.closed = true;
    this.utterance = [];
    this.utteranceBytes = 0;
    this.realtime?.close();
    this.realtime = null;
  }

  /** Tries to (re)open the realtime stream; on success it catches up with the utterance so far. */
  reopen(): Promise<void> {
    if (!this.streaming || this.realtime || this.closed) return Promise.resolve();
    this.opening ??= this.streaming
      .openStream({ sampleRate: this.options.sampleRate, ...(this.options.language ? { language: this.options.language } : {}), ...(this.options.signal ? { signal: this.options.signal } : {}) })
      .then(
        (stream) => {
          if (this.closed) return stream.close();
          for (const pcm of this.utterance) stream.append(pcm);
          this.realtime = stream;
        },
        (err: unknown) => {
          // The provider logged it and remembers it; turns stay on batch meanwhile.
          this.openFailure = err instanceof ProviderError ? err.reason : 'stt_stream_unavailable';
        },
      )
      .finally(() => {
        this.opening = null;
      });
    return this.opening;
  }

  /** `reason`: why a turn meant for realtime goes to batch; null in batch mode. */
  private async transcribe(audio: Buffer, reason: string | null): Promise<string> {
    if (reason !== null) {
      if (audio.length < ((this.options.sampleRate * MIN_COMMIT_MS) / 1000) * 2) return ''; // as the realtime path answers it
      this.options.onFallback?.(reason);
    }
    return this.batch.transcribe(audio, { sampleRate: this.options.sampleRate, ...(this.options.language ? { language: this.options.language } : {}), ...(this.options.signal ? { signal: this.options.signal } : {}) });
  }
}
