import { ProviderError } from '../providers/errors.ts';
import type { TextToSpeech } from '../providers/tts.ts';
import { frames } from './audio.ts';
import type { Playback } from './playback.ts';
import type { BotRoom } from './room-link.ts';
import { splitSentences } from './reply/sentences.ts';

/**
 * The bot's voice: text to speech, one sentence at a time, into the room. A sentence is spoken as
 * soon as it exists (the first of a language model's reply starts while the rest is being
 * written), and text known ahead (the next question) can be synthesised ahead, so it plays the
 * moment it is due. `interrupt()` stops the voice at once: no more audio is sent, the room drops
 * what is queued, and the sentences not yet heard are kept so the bot can go on after a backchannel.
 * `pause()` stops it the same way but holds the audio not yet heard, so `resume()` goes on from the
 * frame that was playing (issue 21, BARGE_IN_MODE=pause).
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
  firstAudioAt: number | null;
  /** Frames sent and not yet played out (what a pause takes back). */
  unplayed: SentFrame[];
  /** Paused (BARGE_IN_MODE=pause): frames held here until resume() or interrupt(). */
  paused: boolean;
  held: Array<{ frame: Buffer; sentence: number }>;
  /** The sentence playing when the pause came (an interruption goes on from it). */
  pausedSentence: number;
  /** Wakes a speak() that finished writing while paused. */
  settle: (() => void) | null;
}

interface SentFrame {
  frame: Buffer;
  sentence: number;
  end: number;
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

  /**
   * Forgets what was prepared for `text` and not spoken (a reply made ahead for a turn that went
   * on): it is never played. A synthesis still running finishes into nothing.
   */
  discard(text: string): void {
    for (const sentence of splitSentences(text)) this.ahead.delete(sentence);
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

  /** Whether the voice is paused (speech over it, not yet judged an interruption or a backchannel). */
  get paused(): boolean {
    return this.last?.paused ?? false;
  }

  /**
   * The first reaction to speech over the bot (BARGE_IN_MODE=pause): no more audio goes out, the
   * room drops what it holds, and the audio not yet heard (from the frame playing now) is kept, so
   * `resume()` goes on from where the respondent stopped hearing it. `interrupt()` ends it instead.
   */
  pause(): boolean {
    const utterance = this.last;
    if (!utterance || utterance.interrupted || utterance.paused || !this.options.playback.audible) return false;
    const now = this.clock();
    utterance.paused = true;
    const unheard = utterance.unplayed.filter((f) => f.end > now);
    utterance.unplayed = [];
    utterance.held = [...unheard.map(({ frame, sentence }) => ({ frame, sentence })), ...utterance.held];
    utterance.pausedSentence = this.playingSentence(utterance, now);
    this.options.room.pause();
    this.options.playback.stop();
    return true;
  }

  /** After a pause that was only a backchannel: the held audio plays from where it stopped. */
  resume(): void {
    const utterance = this.last;
    if (!utterance || !utterance.paused || utterance.interrupted) return;
    utterance.paused = false;
    const held = utterance.held;
    utterance.held = [];
    for (const { frame, sentence } of held) this.emitFrame(utterance, frame, sentence);
    // What the room held (the end of these words: `audio_end`, `listening`) follows them again.
    this.options.room.resume();
    this.wake(utterance);
  }

  interrupt(): void {
    const utterance = this.last;
    if (!utterance || utterance.interrupted) return;
    if (!utterance.paused && !this.options.playback.audible) return;
    const now = this.clock();
    const playing = utterance.paused ? utterance.pausedSentence : this.playingSentence(utterance, now);
    utterance.interrupted = true;
    utterance.abort.abort();
    if (utterance.paused)
      this.options.room.resume(); // nothing more is said; what the pause held goes now
    else {
      this.options.room.interrupt();
      this.options.playback.stop();
    }
    utterance.paused = false;
    utterance.held = [];
    this.rest = utterance.sentences.slice(playing);
    this.wake(utterance);
  }

  private playingSentence(utterance: Utterance, now: number): number {
    const playing = utterance.windows.findIndex((w) => w.end > now);
    return playing === -1 ? utterance.windows.length : playing;
  }

  private wake(utterance: Utterance): void {
    utterance.settle?.();
    utterance.settle = null;
  }

  /** One frame to the room (or held, while paused), with the times it plays. */
  private emitFrame(utterance: Utterance, frame: Buffer, sentence: number): void {
    if (utterance.interrupted) return;
    if (utterance.paused) return void utterance.held.push({ frame, sentence });
    this.options.room.sendAudio(frame);
    const now = this.clock();
    utterance.firstAudioAt ??= now;
    const ms = (frame.length / 2 / this.options.tts.sampleRate) * 1000;
    const start = this.options.playback.add(ms);
    const window = utterance.windows[sentence];
    if (window) window.end = start + ms;
    else utterance.windows[sentence] = { start, end: start + ms };
    while (utterance.unplayed.length > 0 && utterance.unplayed[0]!.end <= now) utterance.unplayed.shift();
    utterance.unplayed.push({ frame, sentence, end: start + ms });
  }

  async speak(source: string | Iterable<string> | AsyncIterable<string>): Promise<SpeakResult> {
    // A paused utterance that nobody resumed is over: its held audio is dropped and the room's pause ends.
    if (this.last?.paused) this.interrupt();
    const utterance: Utterance = {
      abort: new AbortController(),
      sentences: [],
      windows: [],
      interrupted: false,
      firstAudioAt: null,
      unplayed: [],
      paused: false,
      held: [],
      pausedSentence: 0,
      settle: null,
    };
    this.last = utterance;
    this.rest = [];
    const signal = AbortSignal.any([utterance.abort.signal, this.options.signal]);
    const sentences = typeof source === 'string' ? splitSentences(source) : source;
    let carry = Buffer.alloc(0);
    const frameBytes = (this.options.tts.sampleRate * 2 * FRAME_MS) / 1000;
    const send = (data: Buffer): void => {
      const all = carry.length ? Buffer.concat([carry, data]) : data;
      const usable = all.length - (all.length % 2);
      for (const frame of frames(all.subarray(0, usable), frameBytes)) this.emitFrame(utterance, frame, utterance.sentences.length - 1);
      carry = Buffer.from(all.subarray(usable));
    };
    try {
      for await (const sentence of sentences) {
        if (utterance.interrupted) break;
        utterance.sentences.push(sentence);
        const ready = this.ahead.get(sentence);
        this.ahead.delete(sentence);
        const pcm = ready
          ? await ready.catch((err: unknown) => (this.prepareFailed && !(err instanceof ProviderError) ? null : Promise.reject(err)))
          : null;
        if (pcm) {
          send(pcm);
          continue;
        }
        for await (const chunk of this.synthesize(sentence, signal)) {
          if (utterance.interrupted) break;
          send(chunk);
        }
      }
      // Written out while paused: the utterance is not over until it is resumed or interrupted.
      while (utterance.paused && !this.options.signal.aborted) {
        await new Promise<void>((resolve) => {
          utterance.settle = resolve;
          this.options.signal.addEventListener('abort', () => resolve(), { once: true });
        });
      }
    } catch (err) {
      if (!utterance.interrupted) throw err;
    }
    return { interrupted: utterance.interrupted, firstAudioAt: utterance.firstAudioAt };
  }
}
