import type { SpeechToText } from '../../providers/stt.ts';
import type { StreamingSpeechToText, TranscriptionStream } from './types.ts';
import { LISTEN_SAMPLE_RATE } from './types.ts';

/**
 * The words of each turn. Streaming (STT_MODE=realtime): the turn's audio goes to the provider as
 * it arrives, and every pause commits what was said so far, so when the turn ends only the last
 * few hundred milliseconds are left to transcribe. Batch (STT_MODE=batch, or when the provider has
 * no streaming endpoint, or the stream broke): the whole turn is uploaded once it has ended.
 * A broken stream never loses a turn: that turn, and the rest of the session, go the batch way.
 */
export interface TurnText {
  text: string;
  mode: 'realtime' | 'batch';
}

export interface TranscriberOptions {
  batch: SpeechToText;
  streaming: StreamingSpeechToText | null;
  language?: string;
  signal: AbortSignal;
  /** Called once when streaming is given up for this session (the reason, never the key). */
  onStreamingUnavailable?(reason: string): void;
}

export class TurnTranscriber {
  private readonly options: TranscriberOptions;
  private stream: Promise<TranscriptionStream | null> | null = null;
  private broken = false;
  private segments: Array<Promise<string>> = [];
  private uncommitted = 0;
  /** Speech since the last commit: silence alone after a pause is dropped, not transcribed. */
  private spoke = false;

  constructor(options: TranscriberOptions) {
    this.options = options;
    if (!options.streaming) this.broken = true;
  }

  /** Opens the stream ahead of the first turn, so its handshake is not on the turn's path. */
  warm(): void {
    if (!this.broken) void this.open();
  }

  speechStart(preroll: Buffer): void {
    this.segments = [];
    this.uncommitted = 0;
    this.spoke = true;
    this.append(preroll);
  }

  /** Speech again after a pause: the audio since it belongs to the next segment. */
  resume(): void {
    this.spoke = true;
  }

  audio(pcm: Buffer): void {
    this.append(pcm);
  }

  /** A pause in the turn: commit the words so far. */
  pause(): void {
    if (this.broken || this.uncommitted === 0 || !this.spoke) return;
    this.uncommitted = 0;
    this.spoke = false;
    const segment = this.withStream((s) => s.commit());
    // Handled here as well: a commit that fails before finish() awaits it (or after a new turn
    // dropped it) would otherwise be an unhandled rejection, which ends the bot process (exit 70).
    segment.catch(() => undefined);
    this.segments.push(segment);
  }

  /**
   * The words of the turn so far (the segments committed up to now), waiting at most `capMs` for
   * them; null when they are not there in time or this turn is transcribed in batch.
   */
  async textSoFar(capMs: number): Promise<string | null> {
    if (this.broken || this.segments.length === 0) return null;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), capMs)));
    try {
      const texts = await Promise.race([Promise.all(this.segments), late]);
      return texts
        ? texts
            .map((t) => t.trim())
            .filter(Boolean)
            .join(' ')
        : null;
    } catch {
      return null;
    } finally {
      clearTimeout(timer);
    }
  }

  /** The turn ended: its text, from the stream's segments, or from `audio` in one upload. */
  async finish(audio: Buffer): Promise<TurnText> {
    if (!this.broken) {
      this.pause();
      // What is left after the last commit is the silence that ended the turn.
      if (this.uncommitted > 0) {
        this.uncommitted = 0;
        void this.withStream((s) => s.clear()).catch(() => undefined);
      }
      const segments = this.segments;
      this.segments = [];
      try {
        const texts = await Promise.all(segments);
        if (!this.broken)
          return {
            text: texts
              .map((t) => t.trim())
              .filter(Boolean)
              .join(' '),
            mode: 'realtime',
          };
      } catch (err) {
        if (this.options.signal.aborted) throw err;
        this.giveUp(`the transcription stream failed: ${(err as Error).message}`);
      }
    }
    const text = await this.options.batch.transcribe(audio, {
      sampleRate: LISTEN_SAMPLE_RATE,
      ...(this.options.language ? { language: this.options.language } : {}),
      signal: this.options.signal,
    });
    return { text, mode: 'batch' };
  }

  /** The turn is dropped without its text: audio not yet committed is cleared, nothing is awaited. */
  discard(): void {
    this.segments = [];
    if (this.broken || this.uncommitted === 0) return;
    this.uncommitted = 0;
    void this.withStream((s) => s.clear()).catch(() => undefined);
  }

  close(): void {
    void this.stream?.then((s) => s?.close());
  }

  private append(pcm: Buffer): void {
    if (this.broken || pcm.length === 0) return;
    this.uncommitted += pcm.length;
    void this.withStream((s) => s.append(pcm)).catch(() => undefined);
  }

  private open(): Promise<TranscriptionStream | null> {
    this.stream ??= this.options
      .streaming!.openStream({
        sampleRate: LISTEN_SAMPLE_RATE,
        ...(this.options.language ? { language: this.options.language } : {}),
        signal: this.options.signal,
      })
      .catch((err: unknown) => {
        this.giveUp(`the transcription stream could not be opened: ${(err as Error).message}`);
        return null;
      });
    return this.stream;
  }

  private async withStream<T>(use: (s: TranscriptionStream) => T | Promise<T>): Promise<T> {
    const stream = await this.open();
    if (!stream || this.broken) throw new Error('no transcription stream');
    return use(stream);
  }

  private giveUp(reason: string): void {
    if (this.broken) return;
    this.broken = true;
    this.options.onStreamingUnavailable?.(reason);
    void this.stream?.then((s) => s?.close());
  }
}
