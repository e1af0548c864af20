import type { FrameVad } from '../../worker/bot/turns/frame-vad.ts';
import { TurnDetector, type TurnDetectorSettings, type TurnEndReason } from '../../worker/bot/turns/turn-detector.ts';
import { LISTEN_SAMPLE_RATE, type SpeechProbabilitySource, type TurnCompletionModel } from '../../worker/bot/turns/types.ts';
import { wordsUnfinished } from '../../worker/bot/turns/unfinished-words.ts';
import { silenceAfter, type AnswerItem } from './answer-set.ts';

/**
 * The bot's real turn detector (worker/bot/turns/turn-detector.ts, with the endpointing policy it
 * asks) run over one answer in virtual time: the audio goes in frame by frame, the clock is the
 * audio's own, and everything that takes time in a session happens at a fixed virtual delay
 * instead of the machine's. Silero's speech probabilities and Smart Turn's answers are the real
 * models' (computed once per item and cached), Smart Turn's answer arrives `modelMs` after it was
 * asked, and the words of each pause arrive when the route says (replay-words.ts). The result does
 * not depend on the machine's load, so a sweep of the policy's settings is repeatable
 * (turn-sweep.ts). What the listener does with words is mirrored here in a few lines: the pause's
 * words given to the detector when they come in (listener.ts, givePauseWords), and the "do the
 * words go on?" check waiting for them up to `wordsWaitMs`.
 */
export interface PauseWords {
  /** Audio time (ms from the item's start) of the pause event that committed them. */
  commitAtMs: number;
  /** The turn's words up to this pause (every commit so far, joined). */
  text: string;
  /** How long after the commit they came in, on the route replayed. */
  delayMs: number;
}

export interface ReplayRoute {
  name: string;
  /** The words of the pause committed at `commitAtMs` (null: none come). */
  words(item: AnswerItem, commitAtMs: number): PauseWords | null;
}

export interface ReplayOutcome {
  /** Audio time of the first end of turn (null: none within the item and its trailing silence). */
  endAtMs: number | null;
  reason: TurnEndReason | null;
  held: boolean;
  /** When the turn's words were all in (audio time): the reply can start from them. */
  wordsAtMs: number | null;
}

/** The listener's cap on waiting for a pause's words (listener.ts PAUSE_WORDS_WAIT_MS). */
const PAUSE_WORDS_WAIT_MS = 1500;
/** Silence replayed after the item: more than any setting waits. */
const TAIL_MS = 5000;

/** Silero's speech probability per 32 ms frame, for the item and its trailing silence (cached per item). */
export class ReplaySignals {
  private readonly probabilities = new Map<string, number[]>();
  private readonly completions = new Map<string, number>();
  readonly frameSamples: number;
  private readonly vad: SpeechProbabilitySource;
  private readonly turn: TurnCompletionModel;

  constructor(vad: SpeechProbabilitySource, turn: TurnCompletionModel) {
    this.vad = vad;
    this.turn = turn;
    this.frameSamples = vad.frameSamples;
  }

  frames(item: AnswerItem): Buffer[] {
    const pcm = Buffer.concat([item.pcm, silenceAfter(item, TAIL_MS)]);
    const size = this.frameSamples * 2;
    return Array.from({ length: Math.floor(pcm.length / size) }, (_, i) => pcm.subarray(i * size, (i + 1) * size));
  }

  async speechProbabilities(item: AnswerItem): Promise<number[]> {
    const known = this.probabilities.get(item.id);
    if (known) return known;
    const stream = this.vad.open();
    const out: number[] = [];
    for (const frame of this.frames(item)) {
      out.push(await stream.probability(new Int16Array(frame.buffer.slice(frame.byteOffset, frame.byteOffset + frame.byteLength))));
    }
    this.probabilities.set(item.id, out);
    return out;
  }

  /** Smart Turn's answer for the turn audio so far (the same item and length: the same audio). */
  async completion(item: AnswerItem, samples: Int16Array): Promise<number> {
    const key = `${item.id}:${samples.length}`;
    const known = this.completions.get(key);
    if (known !== undefined) return known;
    const p = await this.turn.completion(samples);
    this.completions.set(key, p);
    return p;
  }
}

/** A virtual-time scheduler: callbacks due at an audio time, run in order as the replay reaches it. */
class VirtualTimers {
  private readonly due: Array<{ at: number; seq: number; run: () => Promise<void> | void }> = [];
  private seq = 0;
  now = 0;

  at(at: number, run: () => Promise<void> | void): void {
    this.due.push({ at, seq: this.seq++, run });
    this.due.sort((a, b) => a.at - b.at || a.seq - b.seq);
  }

  async runUntil(time: number): Promise<void> {
    while (this.due.length > 0 && this.due[0]!.at <= time) {
      const next = this.due.shift()!;
      this.now = Math.max(this.now, next.at);
      await next.run();
      await settle();
    }
    this.now = time;
  }
}

/** Lets promise chains started by a callback run to their next real wait. */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

export interface ReplayOptions {
  settings: TurnDetectorSettings;
  /** SPEECH threshold of Silero (VAD_SPEECH_THRESHOLD). */
  vadThreshold: number;
  /** Smart Turn's inference time, fixed (virtual). */
  modelMs: number;
  /** TURN_WORDS_WAIT_MS. */
  wordsWaitMs: number;
  /** false: no end-of-turn model (silence detection). */
  useModel?: boolean;
  language?: string;
}

/** Runs the detector over one item until its first end of turn. */
export async function replayItem(
  item: AnswerItem,
  signals: ReplaySignals,
  route: ReplayRoute,
  options: ReplayOptions,
): Promise<ReplayOutcome> {
  const probabilities = await signals.speechProbabilities(item);
  const frames = signals.frames(item);
  const timers = new VirtualTimers();
  const frameMs = (signals.frameSamples / LISTEN_SAMPLE_RATE) * 1000;
  let index = 0;
  const vad: FrameVad = {
    frameBytes: signals.frameSamples * 2,
    frameMs,
    isSpeech: (_frame, inSpeech) =>
      Promise.resolve(probabilities[index]! >= (inSpeech ? Math.max(0.01, options.vadThreshold - 0.15) : options.vadThreshold)),
    reset: () => undefined,
  };
  const model: TurnCompletionModel = {
    completion: (samples) =>
      new Promise<number>((resolve) => {
        const answer = signals.completion(item, samples);
        timers.at(timers.now + options.modelMs, async () => resolve(await answer));
      }),
  };
  // The words of the turn so far, as the listener holds them, and when the latest commit's come in.
  let pauseWords: string | null = null;
  let latest: { arrivesAt: number; text: string; waiters: Array<() => void> } | null = null;
  let outcome: Omit<ReplayOutcome, 'wordsAtMs'> | null = null;
  const detector: TurnDetector = new TurnDetector({
    vad,
    model: options.useModel === false ? null : model,
    settings: options.settings,
    clock: () => timers.now,
    questionKind: () => item.question,
    ...(options.language ? { language: options.language } : {}),
    wordsSoFar: () => pauseWords,
    wordsUnfinished: () =>
      new Promise<boolean>((resolve) => {
        const pending = latest;
        const answer = () =>
          resolve(pending !== null && timers.now >= pending.arrivesAt && wordsUnfinished(pending.text, options.language));
        if (!pending || timers.now >= pending.arrivesAt) return answer();
        pending.waiters.push(answer);
        timers.at(timers.now + options.wordsWaitMs, answer);
      }),
    onEvent: (event) => {
      if (event.type === 'speech_start' || event.type === 'resume') pauseWords = null;
      if (event.type === 'pause') {
        const words = route.words(item, timers.now);
        if (!words) return;
        const arrivesAt = timers.now + words.delayMs;
        const entry = { arrivesAt, text: words.text, waiters: [] as Array<() => void> };
        latest = entry;
        timers.at(arrivesAt, () => {
          for (const wake of entry.waiters) wake();
          if (latest !== entry || arrivesAt - words.commitAtMs > PAUSE_WORDS_WAIT_MS) return;
          pauseWords = words.text;
          detector.wordsArrived();
        });
      }
      if (event.type === 'turn_end' && !outcome) {
        outcome = { endAtMs: event.end.at, reason: event.end.reason, held: event.end.held };
      }
    },
  });
  for (; index < frames.length && !outcome; index++) {
    // A frame is heard once it has all arrived.
    await timers.runUntil((index + 1) * frameMs);
    detector.push(frames[index]!);
    await detector.drained();
    await settle();
  }
  detector.close();
  const ended = outcome ?? { endAtMs: null, reason: null, held: false };
  // The words that count for the reply are the last commit's, whenever they come in.
  const last = latest as { arrivesAt: number } | null;
  return { ...ended, wordsAtMs: last ? last.arrivesAt : null };
}
