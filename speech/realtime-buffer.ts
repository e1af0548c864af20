import { resamplePcm16 } from '../lib/pcm.ts';
import { pcm16ToFloat } from './audio.ts';
import { RECOGNISER_RATE } from './decode-bounds.ts';
import { SpeechError } from './errors.ts';
import type { SpeechMetrics } from './metrics.ts';
import { PauseSplitter, type SplitOptions } from './pause-splitter.ts';
import type { SpeechService } from './service.ts';

/**
 * The input audio buffer of one realtime session, from one commit (or clear) to the next, and
 * how it becomes text (docs/speech.md, "Realtime decoding").
 * - `whole`: the buffer is decoded in one piece when it is committed.
 * - `incremental` (default): while audio is appended, each piece the PauseSplitter closes at a
 *   pause is decoded at once, as a background job of the session's fair queue (it yields to every
 *   commit and upload waiting). At the commit the session's waiting pieces are promoted, only the
 *   tail since the last cut is left to decode, and the pieces' texts are joined in order. A piece the
 *   full queue refused is decoded at the commit instead; a tail of silence after a cut is skipped.
 * `clear()` drops the buffer and cancels its pieces not yet decoded; a closed session cancels all.
 */
export type RealtimeDecode = 'incremental' | 'whole';

export interface RealtimeBufferOptions {
  service: SpeechService;
  metrics: SpeechMetrics;
  /** The fair queue's session (the realtime session's id). */
  session: string;
  /** Rate of the appended PCM16. */
  rate: number;
  decode: RealtimeDecode;
  split: Omit<SplitOptions, 'rate'>;
  /** Aborted when the session closes. */
  closing: AbortSignal;
}

type Decoded = { ok: true; text: string } | { ok: false; err: unknown };

interface Utterance {
  cancel: AbortController;
  committed: boolean;
  chunks: Buffer[];
  pieces: Array<{ samples: Float32Array; decoded: Promise<Decoded> }>;
}

const fresh = (): Utterance => ({ cancel: new AbortController(), committed: false, chunks: [], pieces: [] });

export class RealtimeBuffer {
  private readonly options: RealtimeBufferOptions;
  private readonly splitter: PauseSplitter | null;
  private utterance = fresh();
  /** Bytes appended since the last commit or clear. */
  bytes = 0;

  constructor(options: RealtimeBufferOptions) {
    this.options = options;
    this.splitter = options.decode === 'incremental' ? new PauseSplitter({ rate: options.rate, ...options.split }) : null;
  }

  append(pcm: Buffer): void {
    this.bytes += pcm.length;
    if (!this.splitter) return void this.utterance.chunks.push(pcm);
    for (const piece of this.splitter.push(pcm)) this.decodeAhead(piece);
  }

  /** Hands the buffer over for a commit (the caller checked it is long enough): its text, when decoded. */
  async commit(): Promise<string> {
    const utterance = this.utterance;
    utterance.committed = true;
    this.utterance = fresh();
    this.bytes = 0;
    if (!this.splitter) return this.decodeNow(this.toSamples(Buffer.concat(utterance.chunks)));
    this.options.service.promote(this.options.session);
    const { tail, speech } = this.splitter.finish();
    const texts = utterance.pieces.map(({ samples, decoded }) =>
      decoded.then((result) => {
        if (result.ok) return result.text;
        // Refused while the queue was full: what is waited for now is decoded now.
        if (result.err instanceof SpeechError && result.err.status === 503) return this.decodeNow(samples, true);
        throw result.err;
      }),
    );
    // With pieces taken in, the tail finishes a transcription the queue already holds: never refused.
    if (utterance.pieces.length === 0 || speech) texts.push(this.decodeNow(this.toSamples(tail), utterance.pieces.length > 0));
    return (await Promise.all(texts)).map((t) => t.trim()).filter(Boolean).join(' ');
  }

  clear(): void {
    this.utterance.cancel.abort();
    this.utterance = fresh();
    this.bytes = 0;
    this.splitter?.finish();
  }

  private decodeAhead(piece: Buffer): void {
    const utterance = this.utterance;
    const { service, session, closing, metrics } = this.options;
    const samples = this.toSamples(piece);
    const decoded = service.transcribe(session, samples, { endpoint: 'realtime', signal: AbortSignal.any([closing, utterance.cancel.signal]), background: true }).then(
      ({ text }): Decoded => {
        metrics.pieces.inc({ stage: utterance.committed ? 'after_commit' : 'before_commit' });
        return { ok: true, text };
      },
      (err: unknown): Decoded => ({ ok: false, err }),
    );
    utterance.pieces.push({ samples, decoded });
  }

  private async decodeNow(samples: Float32Array, admitted = false): Promise<string> {
    const { text } = await this.options.service.transcribe(this.options.session, samples, { endpoint: 'realtime', signal: this.options.closing, admitted });
    this.options.metrics.pieces.inc({ stage: 'after_commit' });
    return text;
  }

  private toSamples(pcm: Buffer): Float32Array {
    return pcm16ToFloat(resamplePcm16(pcm, this.options.rate, RECOGNISER_RATE));
  }
}
