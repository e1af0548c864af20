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
 *   The open piece is also decoded early, as soon as its speech has been followed by
 *   `split.earlyMs` of quiet (before the client's own pause has made it commit): that decode is the
 *   piece's when the piece closes, or the tail's at the commit, if no speech came after it; else it
 *   is cancelled (or, already running, its text is dropped).
 * `clear()` drops the buffer and cancels its pieces not yet decoded; a closed session cancels all.
 */
export type RealtimeDecode = 'incremental' | 'whole';

export interface RealtimeBufferOptions {
  service: SpeechService;
  metrics: SpeechMetrics;
  /** The fair queue's session (the realtime session's id) and client (its caller's address). */
  session: string;
  client: string;
  /** Rate of the appended PCM16. */
  rate: number;
  decode: RealtimeDecode;
  split: Omit<SplitOptions, 'rate'>;
  /** Aborted when the session closes. */
  closing: AbortSignal;
}

type Decoded = { ok: true; text: string } | { ok: false; err: unknown };

interface Piece {
  samples: Float32Array;
  decoded: Promise<Decoded>;
}

interface Utterance {
  cancel: AbortController;
  committed: boolean;
  chunks: Buffer[];
  pieces: Piece[];
  /** The open piece decoded early, while no speech has come after it (see above). */
  early: (Piece & { cancel: AbortController }) | null;
}

const fresh = (): Utterance => ({ cancel: new AbortController(), committed: false, chunks: [], pieces: [], early: null });

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
    const utterance = this.utterance;
    for (const event of this.splitter.pushEvents(pcm)) {
      if (event.type === 'early') {
        const cancel = new AbortController();
        utterance.early = { ...this.decodeInBackground(event.pcm, cancel.signal), cancel };
      } else if (event.type === 'resumed') {
        this.dropEarly(utterance);
      } else if (utterance.early) {
        // The piece is the early tail's speech and the quiet after it: decoded once, already.
        this.options.metrics.earlyTails.inc({ outcome: 'used' });
        utterance.pieces.push(utterance.early);
        utterance.early = null;
      } else {
        utterance.pieces.push(this.decodeInBackground(event.pcm));
      }
    }
  }

  /** Hands the buffer over for a commit (the caller checked it is long enough): its text, when decoded. */
  async commit(): Promise<string> {
    const utterance = this.utterance;
    utterance.committed = true;
    this.utterance = fresh();
    this.bytes = 0;
    // A commit that failed cancels its parts still to decode (see below): retries and the tail too.
    const committed = AbortSignal.any([this.options.closing, utterance.cancel.signal]);
    if (!this.splitter) return this.decodeNow(this.toSamples(Buffer.concat(utterance.chunks)), committed);
    this.options.service.promote(this.options.session);
    const { tail, speech } = this.splitter.finish();
    const texts = utterance.pieces.map(({ samples, decoded }) =>
      decoded.then((result) => (result.ok ? result.text : this.retryAtCommit(samples, result.err, committed))),
    );
    if (utterance.early) {
      // No speech since the early tail: it is the tail (up to the quiet after it).
      this.options.metrics.earlyTails.inc({ outcome: 'used' });
      const { samples, decoded } = utterance.early;
      texts.push(decoded.then((result) => (result.ok ? result.text : this.retryAtCommit(samples, result.err, committed))));
    } else if (utterance.pieces.length === 0 || speech) {
      texts.push(this.decodeNow(this.toSamples(tail), committed));
    }
    try {
      return (await Promise.all(texts))
        .map((t) => t.trim())
        .filter(Boolean)
        .join(' ');
    } catch (err) {
      utterance.cancel.abort(); // the commit failed (a full queue refused a part): its other parts are not wanted
      throw err;
    }
  }

  clear(): void {
    this.dropEarly(this.utterance);
    this.utterance.cancel.abort();
    this.utterance = fresh();
    this.bytes = 0;
    this.splitter?.finish();
  }

  /** A decode ahead of the commit, as a background job of the session (it yields to commits and uploads). */
  private decodeInBackground(pcm: Buffer, cancel?: AbortSignal): Piece {
    const utterance = this.utterance;
    const { service, session, client, closing, metrics } = this.options;
    const samples = this.toSamples(pcm);
    const signals = [closing, utterance.cancel.signal, ...(cancel ? [cancel] : [])];
    const decoded = service
      .transcribe(session, samples, { client, endpoint: 'realtime', signal: AbortSignal.any(signals), background: true })
      .then(
        ({ text }): Decoded => {
          // An early tail dropped while it ran is no piece of the transcript.
          if (!cancel?.aborted) metrics.pieces.inc({ stage: utterance.committed ? 'after_commit' : 'before_commit' });
          return { ok: true, text };
        },
        (err: unknown): Decoded => ({ ok: false, err }),
      );
    return { samples, decoded };
  }

  /** Speech came after the early tail (or the buffer was cleared): its decode is not wanted. */
  private dropEarly(utterance: Utterance): void {
    if (!utterance.early) return;
    this.options.metrics.earlyTails.inc({ outcome: 'dropped' });
    utterance.early.cancel.abort();
    utterance.early = null;
  }

  /** A decode ahead that failed: refused while the queue was full, it is queued again now (and may be refused again); anything else fails the commit. */
  private retryAtCommit(samples: Float32Array, err: unknown, signal: AbortSignal): Promise<string> {
    if (err instanceof SpeechError && err.status === 503) return this.decodeNow(samples, signal);
    return Promise.reject(err instanceof Error ? err : new Error('a piece failed'));
  }

  private async decodeNow(samples: Float32Array, signal: AbortSignal): Promise<string> {
    const { session, client } = this.options;
    const { text } = await this.options.service.transcribe(session, samples, { client, endpoint: 'realtime', signal });
    this.options.metrics.pieces.inc({ stage: 'after_commit' });
    return text;
  }

  private toSamples(pcm: Buffer): Float32Array {
    return pcm16ToFloat(resamplePcm16(pcm, this.options.rate, RECOGNISER_RATE));
  }
}
