import { endpoint, holdEndMs, type EndpointingRules, type SilenceView } from '../policy/endpointing.ts';
import type { QuestionKind } from '../policy/question-kind.ts';
import type { FrameVad } from './frame-vad.ts';
import type { PausePatience } from './pause-profile.ts';
import type { TurnCompletionModel } from './types.ts';
import { LISTEN_SAMPLE_RATE } from './types.ts';

/**
 * Where a respondent's turn starts and ends, from their audio as it arrives.
 *
 * Speech starts after `minSpeechMs` of voiced frames; with `onsetMs` below it, a shorter voiced run
 * announces itself first (`onset`, and `onset_end` if silence follows instead), so a bot that is
 * speaking can pause its voice sooner than a turn starts. In a pause, once the silence reaches the
 * commit point (`modelSilenceMs`, or `silenceMs` when shorter), a `pause` event lets streaming
 * speech-to-text finish the words so far; with `detection: 'model'` the end-of-turn model is asked
 * then. Whether the turn may end is the endpointing policy's to say, at each frame of silence
 * (policy/endpointing.ts, issue 40): a confident "finished" ends it at the commit point (reason
 * `model`), unless the answer is a fragment to an open question, which is held until the silence
 * reaches `holdMs`, or its words plainly go on. Otherwise the turn ends after `silenceMs` (silence
 * detection) or `maxSilenceMs` (the longest thinking pause the model mode waits out), or at the end
 * of a hold if that is later, reason `silence`; a turn that never pauses ends at the utterance bound
 * (reason `max`). Speech in a pause cancels a pending model answer.
 *
 * Patience (`patience`, issue 21): each silence inside a turn that speech follows is recorded, and
 * the respondent's learned extra lengthens the hold of their held fragments (issue 40: only the
 * hold; a finished long answer or one to a closed question ends as fast as anyone's).
 *
 * The detector runs for a whole session: after a turn ends it listens for the next one at once, so
 * a respondent who goes on talking is heard. Frames are classified in arrival order, one at a time.
 * Audio waiting to be classified is bounded (`maxBacklogBytes`): audio that arrives faster than it
 * can be classified beyond that is dropped on arrival and reported (`onOverflow`), so a flood cannot
 * grow the process's memory; an answer that arrives in one burst (within the bound) is heard whole.
 */
export type TurnEndReason = 'silence' | 'model' | 'words' | 'max';

export interface TurnDetectorSettings {
  minSpeechMs: number;
  silenceMs: number;
  modelSilenceMs: number;
  maxSilenceMs: number;
  modelThreshold: number;
  maxUtteranceBytes: number;
  /** Audio received but not yet classified, at most (beyond it, arriving audio is dropped). */
  maxBacklogBytes: number;
  /** Ask the model this long before the commit point, so its answer is ready at it (0: at it). */
  modelEarlyMs?: number;
  /** While the model's last answer is "not finished", ask it again every this much more silence (0: once per pause). */
  modelReaskMs?: number;
  /**
   * Voiced time before a turn starts after which an `onset` event says speech may be starting (0 or
   * at least `minSpeechMs`: never); `onset_end` follows once as much silence comes with no turn.
   */
  onsetMs?: number;
  /** TURN_HOLD_MS: the silence a fragment to an open question needs before it may end (0 or absent: nothing is held). */
  holdMs?: number;
  /** TURN_HOLD_MAX_WORDS, TURN_HOLD_MAX_VOICED_MS: what a fragment is (endpointing.ts). */
  holdMaxWords?: number;
  holdMaxVoicedMs?: number;
}

export interface TurnEnd {
  reason: TurnEndReason;
  /** Wall time when the last speech frame arrived. */
  speechEndedAt: number;
  /** Wall time of the decision. */
  at: number;
  /** The turn's audio: a little before speech started, to the decision. */
  audio: Buffer;
  /** Silence added to the end of this turn from the respondent's own pauses (held fragments only). */
  patienceExtraMs: number;
  /** The turn was a fragment to an open question, held until TURN_HOLD_MS (endpointing.ts). */
  held: boolean;
  /** Voiced time in the turn. */
  speechMs: number;
  /** The end-of-turn model's last answer in this turn, and how long it took. */
  probability?: number;
  inferenceMs?: number;
}

export type DetectorEvent =
  | { type: 'onset'; at: number }
  | { type: 'onset_end'; at: number }
  | { type: 'speech_start'; at: number; preroll: Buffer }
  | { type: 'audio'; pcm: Buffer }
  | { type: 'pause'; at: number; speechEndedAt: number }
  | { type: 'resume'; at: number }
  | { type: 'turn_end'; end: TurnEnd };

const PREROLL_MS = 300;
/** The end-of-turn model looks at the last 8 s of the turn. */
const MODEL_WINDOW_BYTES = 8 * LISTEN_SAMPLE_RATE * 2;

export interface TurnDetectorOptions {
  vad: FrameVad;
  /** The end-of-turn model; null: silence detection only (the caller decides, worker/bot/listening.ts). */
  model: TurnCompletionModel | null;
  settings: TurnDetectorSettings;
  onEvent(event: DetectorEvent): void;
  /**
   * Asked when the model says "finished": whether the words so far (the transcript of the turn up
   * to this pause) clearly go on. True keeps the turn open until speech resumes or the longest pause.
   */
  wordsUnfinished?(): Promise<boolean>;
  onWordsVeto?(): void;
  /** The words of the turn so far, when they are in (realtime text of the last pause); null: not (yet). */
  wordsSoFar?(): string | null;
  /** What the bot last asked (default: open, the patient side). */
  questionKind?(): QuestionKind;
  /** The interview's language (the words' check knows English words). */
  language?: string;
  /** A failed model call is treated as "not finished" (a failed VAD frame as silence); it is reported here. */
  onModelError?(err: unknown): void;
  /** Audio was dropped because the backlog was full (once per overflow, until the backlog drains). */
  onOverflow?(): void;
  /** This respondent's pauses, learned as they speak; absent: no learning. */
  patience?: PausePatience;
  clock?: () => number;
}

/** Between turns: the voiced run that may start one, an onset announced over it (null: none), the audio just before. */
interface Listening {
  kind: 'listening';
  voicedRun: number;
  onset: { silenceMs: number } | null;
  preroll: Buffer[];
  prerollBytes: number;
}

/** Inside a turn: its audio and speech, the silence since the last voiced frame, and the model's view of that silence. */
interface InTurn {
  kind: 'in_turn';
  speechMs: number;
  silentRun: number;
  audio: Buffer[];
  audioBytes: number;
  /** The silence has reached the commit point (a `pause` was announced). */
  paused: boolean;
  lastVoicedAt: number;
  /** The model asked about this silence (null: not yet). */
  ask: SilenceAsk | null;
  /** The model's last answer in this turn, and how long it took. */
  verdict: { probability: number; inferenceMs: number } | null;
}

/** The model was asked about the current silence when it was this long; its latest answer (undefined: none yet). */
interface SilenceAsk {
  atSilenceMs: number;
  answer: number | undefined;
}

const listening = (): Listening => ({ kind: 'listening', voicedRun: 0, onset: null, preroll: [], prerollBytes: 0 });

export class TurnDetector {
  private readonly vad: FrameVad;
  private readonly model: TurnCompletionModel | null;
  private readonly settings: TurnDetectorSettings;
  private readonly options: TurnDetectorOptions;
  private readonly clock: () => number;
  private readonly pending: Buffer[] = [];
  /** Bytes received and not yet classified: the queue, and the partial frame carried over. */
  private unclassified = 0;
  private overflowed = false;
  private carry: Buffer = Buffer.alloc(0);
  /** Set and cleared synchronously: a drain that ends without awaiting must not look still running. */
  private draining = false;
  private idle: Promise<void> = Promise.resolve();
  private closed = false;

  /** Where the respondent is: between turns, or inside one. */
  private state: Listening | InTurn = listening();
  /**
   * The model's calls, which outlive the silence they were asked about: `generation` changes
   * whenever speech comes back or a turn ends, so an answer about an older pause is ignored; `busy`:
   * a call is in flight; `deciding`: a "finished" is being checked against the words.
   */
  private readonly calls = { generation: 0, busy: false, deciding: false };

  constructor(options: TurnDetectorOptions) {
    this.options = options;
    this.vad = options.vad;
    this.model = options.model;
    this.settings = options.settings;
    this.clock = options.clock ?? Date.now;
  }

  /** Whether the respondent is inside a turn (speech started and the turn has not ended). */
  get speaking(): boolean {
    return this.state.kind === 'in_turn';
  }

  /** Voiced time so far in the current turn. */
  get currentSpeechMs(): number {
    return this.state.kind === 'in_turn' ? this.state.speechMs : 0;
  }

  /** Whether received audio is being classified now (a burst can take a while). */
  get classifying(): boolean {
    return this.draining;
  }

  /** Audio received and not yet classified (bounded by `maxBacklogBytes`). */
  get backlogBytes(): number {
    return this.unclassified;
  }

  push(pcm: Buffer): void {
    if (this.closed || pcm.length === 0) return;
    const room = this.settings.maxBacklogBytes - this.unclassified;
    if (pcm.length > room) {
      if (!this.overflowed) this.options.onOverflow?.();
      this.overflowed = true;
      // What fits is kept (copied, so the rest of a large message is not held by a view of it).
      const fits = room - (room % 2);
      if (fits <= 0) return;
      pcm = Buffer.from(pcm.subarray(0, fits));
    }
    this.pending.push(pcm);
    this.unclassified += pcm.length;
    if (this.draining) return;
    // Many messages can arrive in one turn of the event loop (a burst). A chunk that completes no
    // frame makes the drain end at once; the flag is cleared inside it, so the next push (in the
    // same turn) starts another drain instead of leaving its audio unheard.
    this.draining = true;
    this.idle = this.drain();
  }

  /** Settles when every frame pushed so far has been classified. */
  drained(): Promise<void> {
    return this.idle;
  }

  /** Ends the current turn now (the wall-time bound of one utterance). */
  forceEnd(reason: TurnEndReason): void {
    if (this.state.kind === 'in_turn') this.endTurn(this.state, reason);
  }

  close(): void {
    this.closed = true;
    this.pending.length = 0;
    this.unclassified = 0;
  }

  private async drain(): Promise<void> {
    const size = this.vad.frameBytes;
    try {
      while (this.pending.length > 0 && !this.closed) {
        const chunk = this.pending.shift()!;
        let data = this.carry.length ? Buffer.concat([this.carry, chunk]) : chunk;
        let offset = 0;
        for (; data.length - offset >= size && !this.closed; offset += size) {
          await this.frame(data.subarray(offset, offset + size));
          if (!this.closed) this.unclassified -= size;
        }
        data = data.subarray(offset);
        this.carry = Buffer.from(data);
      }
    } finally {
      this.draining = false;
    }
  }

  /**
   * Before a turn: `onset` once a voiced run reaches `onsetMs`, and `onset_end` once as much
   * silence follows it with no turn started. A dip of a frame inside a word (a plosive) does not
   * end an onset, so a voice paused at it does not stutter.
   */
  private trackOnset(before: Listening, voiced: boolean, frameMs: number, now: number): void {
    const onsetMs = this.settings.onsetMs ?? 0;
    if (onsetMs <= 0 || onsetMs >= this.settings.minSpeechMs) return;
    if (!before.onset) {
      if (before.voicedRun >= onsetMs && before.voicedRun < this.settings.minSpeechMs) {
        before.onset = { silenceMs: 0 };
        this.options.onEvent({ type: 'onset', at: now });
      }
      return;
    }
    before.onset.silenceMs = voiced ? 0 : before.onset.silenceMs + frameMs;
    if (before.onset.silenceMs < onsetMs) return;
    before.onset = null;
    this.options.onEvent({ type: 'onset_end', at: now });
  }

  /** A frame the VAD cannot classify counts as silence (and is reported): the session goes on. */
  private async classify(frame: Buffer): Promise<boolean> {
    try {
      return await this.vad.isSpeech(frame, this.state.kind === 'in_turn');
    } catch (err) {
      this.options.onModelError?.(err);
      return false;
    }
  }

  private async frame(frame: Buffer): Promise<void> {
    const voiced = await this.classify(frame);
    if (this.closed) return;
    const now = this.clock();
    if (this.state.kind === 'listening') return this.beforeTurn(this.state, frame, voiced, now);
    const turn = this.state;
    const { frameMs } = this.vad;
    const room = this.settings.maxUtteranceBytes - turn.audioBytes;
    const kept = frame.length > room ? frame.subarray(0, room) : frame;
    turn.audio.push(kept);
    turn.audioBytes += kept.length;
    // The frame is counted before it is announced, so whoever reads `currentSpeechMs` on its
    // `audio` event (the barge-in check) sees the speech up to and including it, not one frame less.
    if (voiced) turn.speechMs += frameMs;
    this.options.onEvent({ type: 'audio', pcm: kept });
    if (turn.audioBytes >= this.settings.maxUtteranceBytes) return this.endTurn(turn, 'max');
    if (voiced) {
      if (turn.silentRun > 0) this.options.patience?.record(turn.silentRun);
      turn.silentRun = 0;
      turn.lastVoicedAt = now;
      // Speech again: every answer about this silence (asked early, or at the pause) is stale.
      if (turn.paused || turn.ask) this.calls.generation++;
      turn.ask = null;
      if (turn.paused) {
        turn.paused = false;
        this.options.onEvent({ type: 'resume', at: now });
      }
      return;
    }
    turn.silentRun += frameMs;
    const commitPoint = this.commitPoint();
    if (this.model) this.maybeAsk(turn, commitPoint);
    const holdEnd = holdEndMs(this.view(turn), this.rules());
    if (!turn.paused && turn.silentRun >= commitPoint) {
      turn.paused = true;
      this.options.onEvent({ type: 'pause', at: now, speechEndedAt: turn.lastVoicedAt });
      if (this.model && this.modelMayDecide(turn)) {
        if (!turn.ask || this.earlyNotFinished(turn, commitPoint)) this.askModel(turn, this.calls.generation);
        else void this.consider(turn, this.calls.generation);
      }
    } else if (this.model && holdEnd > 0 && turn.silentRun >= holdEnd && turn.silentRun - frameMs < holdEnd) {
      // A "finished" that came in during the hold ends the turn once the hold is over.
      void this.consider(turn, this.calls.generation);
    }
    // The silence, or words already in (the model's answers are weighed when they come, in consider()).
    const verdict = endpoint({ ...this.view(turn), probability: undefined }, this.rules());
    if (verdict.end) this.endTurn(turn, verdict.reason);
  }

  /** The words of the last pause came in: they may say the answer is long (no hold) or goes on. */
  wordsArrived(): void {
    if (this.state.kind === 'in_turn' && this.model && this.state.paused) void this.consider(this.state, this.calls.generation);
  }

  /** The endpointing settings (policy/endpointing.ts), from the detector's. */
  private rules(): EndpointingRules {
    const s = this.settings;
    return {
      commitPointMs: this.commitPoint(),
      silenceEndMs: this.model ? s.maxSilenceMs : s.silenceMs,
      modelThreshold: s.modelThreshold,
      holdMs: s.holdMs ?? 0,
      holdMaxWords: s.holdMaxWords ?? 7,
      holdMaxVoicedMs: s.holdMaxVoicedMs ?? 2500,
      // Silence detection stays what it says: VAD_SILENCE_MS of silence, whatever the words.
      wordsEnd: this.model !== null,
    };
  }

  /** What is known of this turn's silence now. */
  private view(turn: InTurn): SilenceView {
    return {
      silenceMs: turn.silentRun,
      speechMs: turn.speechMs,
      words: this.options.wordsSoFar?.() ?? null,
      question: this.options.questionKind?.() ?? 'open',
      probability: turn.ask?.answer,
      learnedExtraMs: this.extraMs(),
      ...(this.options.language ? { language: this.options.language } : {}),
    };
  }

  /** Between turns: keep the preroll, follow the voiced run (and an onset), start a turn at `minSpeechMs`. */
  private beforeTurn(before: Listening, frame: Buffer, voiced: boolean, now: number): void {
    const { frameMs } = this.vad;
    before.preroll.push(frame);
    before.prerollBytes += frame.length;
    const keep = Math.round((LISTEN_SAMPLE_RATE * PREROLL_MS) / 1000) * 2;
    while (before.prerollBytes - before.preroll[0]!.length >= keep) before.prerollBytes -= before.preroll.shift()!.length;
    before.voicedRun = voiced ? before.voicedRun + frameMs : 0;
    this.trackOnset(before, voiced, frameMs, now);
    if (before.voicedRun < this.settings.minSpeechMs) return;
    const preroll = Buffer.concat(before.preroll);
    this.state = {
      kind: 'in_turn',
      speechMs: before.voicedRun,
      silentRun: 0,
      audio: [preroll],
      audioBytes: preroll.length,
      paused: false,
      lastVoicedAt: now,
      ask: null,
      verdict: null,
    };
    this.options.onEvent({ type: 'speech_start', at: now, preroll });
  }

  private commitPoint(): number {
    return Math.min(this.settings.modelSilenceMs, this.settings.silenceMs);
  }

  private extraMs(): number {
    return this.options.patience?.extraMs() ?? 0;
  }

  /** The model asked ahead of the commit point, and again as the silence grows (issue 21). */
  private maybeAsk(turn: InTurn, commitPoint: number): void {
    if (!this.modelMayDecide(turn)) return;
    const early = this.settings.modelEarlyMs ?? 0;
    const reask = this.settings.modelReaskMs ?? 0;
    // Past the commit with no ask yet (a hold shorter than the longest silence nearing its end): ask now.
    if (turn.paused && !turn.ask && !this.calls.busy) return this.askModel(turn, this.calls.generation);
    if (!turn.ask && early > 0 && !turn.paused && turn.silentRun >= commitPoint - early && turn.silentRun < commitPoint) {
      return this.askModel(turn, this.calls.generation);
    }
    // An early answer still in flight at the commit point: once it says "not finished", ask at once.
    if (turn.paused && this.earlyNotFinished(turn, commitPoint)) return this.askModel(turn, this.calls.generation);
    const ask = turn.ask;
    const notFinished = ask !== null && ask.answer !== undefined && ask.answer < this.settings.modelThreshold;
    if (turn.paused && reask > 0 && !this.calls.busy && notFinished && turn.silentRun >= ask.atSilenceMs + reask)
      this.askModel(turn, this.calls.generation);
  }

  /**
   * Whether an answer of the model about this silence could end the turn sooner than the silence
   * will. Not while a fragment is held and its hold outlasts the longest silence (the defaults):
   * the hold's end ends it whatever the model says, so the asks (at the commit, then every
   * TURN_MODEL_REASK_MS) would be inference for nothing; the bench measured the VAD and the model at
   * 7.5% of a core per session with them, over the 5% aim. A hold shorter than the longest silence
   * asks again from just before its end. Words that come in and make the answer long end it on
   * their own (or the asks resume, the answer being no longer held).
   */
  private modelMayDecide(turn: InTurn): boolean {
    const rules = this.rules();
    const holdEnd = holdEndMs(this.view(turn), rules);
    if (holdEnd === 0) return true;
    return holdEnd < rules.silenceEndMs && turn.silentRun >= holdEnd - (this.settings.modelEarlyMs ?? 0);
  }

  /**
   * The early answer said "not finished" about less silence than the commit point, and no ask is in
   * flight: the model is asked again at the commit, as it would have been without the early ask
   * (the last 100 ms of silence often change its mind), rather than a whole TURN_MODEL_REASK_MS later.
   */
  private earlyNotFinished(turn: InTurn, commitPoint: number): boolean {
    const ask = turn.ask;
    return (
      ask !== null &&
      !this.calls.busy &&
      ask.atSilenceMs < commitPoint &&
      ask.answer !== undefined &&
      ask.answer < this.settings.modelThreshold
    );
  }

  private askModel(turn: InTurn, generation: number): void {
    const started = this.clock();
    // A newer question about the same silence keeps the last answer until its own comes in.
    turn.ask = { atSilenceMs: turn.silentRun, answer: turn.ask?.answer };
    this.calls.busy = true;
    const tail = Buffer.concat(turn.audio).subarray(-MODEL_WINDOW_BYTES);
    const samples = new Int16Array(tail.buffer.slice(tail.byteOffset, tail.byteOffset + (tail.byteLength & ~1)));
    this.model!.completion(samples).then(
      (probability) => {
        this.calls.busy = false;
        // The same generation means the same turn and silence, so `turn` is still the state.
        if (generation !== this.calls.generation || this.state !== turn || this.closed || !turn.ask) return;
        turn.verdict = { probability, inferenceMs: this.clock() - started };
        turn.ask.answer = probability;
        void this.consider(turn, generation);
      },
      (err: unknown) => {
        this.calls.busy = false;
        this.options.onModelError?.(err);
      },
    );
  }

  /** At the pause, with the model's answer in: the policy says whether its "finished" ends the turn now. */
  private async consider(turn: InTurn, generation: number): Promise<void> {
    const current = () => generation === this.calls.generation && this.state === turn && turn.paused && !this.closed;
    const verdict = () => endpoint(this.view(turn), this.rules());
    const mayEnd = () => verdict().end;
    if (!current() || this.calls.deciding || !mayEnd()) return;
    this.calls.deciding = true;
    try {
      // The words, if still on their way, can say "not yet" (a trailing comma, "and", "um"): then the pause runs on.
      if (this.options.wordsUnfinished && (await this.options.wordsUnfinished().catch(() => false))) {
        this.options.onWordsVeto?.();
        return;
      }
      // The words that came in meanwhile may also make the answer a held fragment.
      const now = verdict();
      if (current() && now.end) this.endTurn(turn, now.reason);
    } finally {
      this.calls.deciding = false;
    }
  }

  private endTurn(turn: InTurn, reason: TurnEndReason): void {
    const end: TurnEnd = {
      reason,
      speechEndedAt: turn.lastVoicedAt,
      at: this.clock(),
      audio: Buffer.concat(turn.audio),
      speechMs: turn.speechMs,
      held: holdEndMs(this.view(turn), this.rules()) > 0,
      patienceExtraMs: holdEndMs(this.view(turn), this.rules()) > 0 ? this.extraMs() : 0,
      ...(turn.verdict ? { probability: turn.verdict.probability, inferenceMs: turn.verdict.inferenceMs } : {}),
    };
    this.state = listening();
    this.calls.generation++;
    this.options.onEvent({ type: 'turn_end', end });
  }
}
