import { ProviderError } from '../providers/errors.ts';
import type { TextToSpeech } from '../providers/tts.ts';
import { frames } from './audio.ts';
import type { Playback } from './playback.ts';
import type { BotRoom } from './room-link.ts';
import { splitSentences } from './turns/sentences.ts';

/**
 * The bot's voice: text to speech, one sentence at a time, into the room. A sentence is spoken as
 * soon as it exists (the first of a language model's reply starts while the rest is being
 * written), and text known ahead (the next question) can be synthesised ahead, so it plays the
 * moment it is due. `interrupt()` stops the voice at once: no more audio is sent, the room drops
 * what is queued, and the sentences not yet heard are kept so the bot can go on after a backchannel.
 */
export interface SpeakResult {
  interrupted: boolean;
  /** Wall time the first audio was handed to the room (null: none). */
  firstAudioAt: number | null;
}

export interface SpeakerOptions {
  room: BotRoom;
  tts: TextToSpeech;
  playback: Playback;
  signal: AbortSignal;
  onFirstByte(startMs: number, endMs: number, error?: string): void;
  clock?: () => number;
}

const FRAME_MS = 20;

interface Utterance {
  abort: AbortController;
  sentences: string[];
  /** When each sentence sent so far plays at the respondent, [start, end). */
  windows: Array<{ start: number; end: number }>;
  interrupted: boolean;
}

export class Speaker {
  private readonly options: SpeakerOptions;
  private readonly clock: () => number;
  private readonly ahead = new Map<string, Promise<Buffer>>();
  private preparing: Promise<void> = Promise.resolve();
  private prepareFailed = false;
  private last: Utterance | null = null;
  private rest: string[] = [];

  constructor(options: SpeakerOptions) {
    this.options = options;
    this.clock = options.clock ?? Date.now;
  }

  /** Starts synthesising `text` now, so that speaking it later needs no provider round trip. */
  prepare(text: string): void {
    for (const sentence of splitSentences(text)) {
      if (this.ahead.has(sentence)) continue;
      // One at a time, in order: the first sentence is ready soonest, and the provider sees no burst.
      const job = this.preparing.then(async () => {
        // After a failure nothing more is prepared ahead: a failing provider is not asked again
        // until a sentence is due (and then with its own retries).
        if (this.prepareFailed) throw new Error('not prepared: an earlier sentence failed');
        const chunks: Buffer[] = [];
        for await (const chunk of this.synthesize(sentence, this.options.signal)) chunks.push(chunk);
        return Buffer.concat(chunks);
      });
      this.preparing = job.then(
        () => undefined,
        () => {
          // Its failure is the session's only if the sentence is spoken.
          this.prepareFailed = true;
        },
      );
      this.ahead.set(sentence, job);
    }
  }

  /** The provider's stream for one sentence, with its tts.first_byte measure. */
  private async *synthesize(sentence: string, signal: AbortSignal): AsyncIterable<Buffer> {
    const t0 = this.clock();
    let first = true;
    try {
      for await (const chunk of this.options.tts.synthesize(sentence, { signal })) {
        if (first) {
          first = false;
          this.options.onFirstByte(t0, this.clock());
        }
        yield chunk;
      }
    } catch (err) {
      if (first && !signal.aborted) this.options.onFirstByte(t0, this.clock(), (err as Error).message);
      throw err;
    }
  }

  /** Whether the last utterance can still be heard. */
  get audible(): boolean {
    return this.options.playback.audible;
  }

  /** The sentences an interruption cut, from the one that was playing; taken once. */
  takeInterrupted(): string[] {
    const rest = this.rest;
    this.rest = [];
    return rest;
  }

  interrupt(): void {
    const utterance = this.last;
    if (!utterance || utterance.interrupted || !this.options.playback.audible) return;
    const now = this.clock();
    utterance.interrupted = true;
    utterance.abort.abort();
    this.options.room.interrupt();
    this.options.playback.stop();
    const playing = utterance.windows.findIndex((w) => w.end > now);
    this.rest = utterance.sentences.slice(playing === -1 ? utterance.windows.length : playing);
  }

  async speak(source: string | Iterable<string> | AsyncIterable<string>): Promise<SpeakResult> {
    const utterance: Utterance = { abort: new AbortController(), sentences: [], windows: [], interrupted: false };
    this.last = utterance;
    this.rest = [];
    const signal = AbortSignal.any([utterance.abort.signal, this.options.signal]);
    const sentences = typeof source === 'string' ? splitSentences(source) : source;
    let firstAudioAt: number | null = null;
    let carry = Buffer.alloc(0);
    const frameBytes = (this.options.tts.sampleRate * 2 * FRAME_MS) / 1000;
    const send = (data: Buffer): void => {
      const all = carry.length ? Buffer.concat([carry, data]) : data;
      const usable = all.length - (all.length % 2);
      for (const frame of frames(all.subarray(0, usable), frameBytes)) {
        if (utterance.interrupted) return;
        this.options.room.sendAudio(frame);
        firstAudioAt ??= this.clock();
        const ms = (frame.length / 2 / this.options.tts.sampleRate) * 1000;
        const start = this.options.playback.add(ms);
        const window = utterance.windows[utterance.sentences.length - 1];
        if (window) window.end = start + ms;
        else utterance.windows[utterance.sentences.length - 1] = { start, end: start + ms };
      }
      carry = Buffer.from(all.subarray(usable));
    };
    try {
      for await (const sentence of sentences) {
        if (utterance.interrupted) break;
        utterance.sentences.push(sentence);
        const ready = this.ahead.get(sentence);
        this.ahead.delete(sentence);
        const pcm = ready ? await ready.catch((err: unknown) => (this.prepareFailed && !(err instanceof ProviderError) ? null : Promise.reject(err))) : null;
        if (pcm) {
          send(pcm);
          continue;
        }
        for await (const chunk of this.synthesize(sentence, signal)) {
          if (utterance.interrupted) break;
          send(chunk);
        }
      }
    } catch (err) {
      if (!utterance.interrupted) throw err;
    }
    return { interrupted: utterance.interrupted, firstAudioAt };
  }
}
