import type { BotRoom } from './room-link.ts';
import { SessionEnd } from './session-end.ts';
import type { Playback } from './playback.ts';
import { isBackchannel } from './turns/backchannel.ts';
import { BargeIn, type BargeInTicket } from './turns/barge-in.ts';
import { wordsUnfinished } from './turns/unfinished-words.ts';
import { PauseProfile } from './turns/pause-profile.ts';
import type { TurnTranscriber } from './turns/transcriber.ts';
import { TurnDetector, type DetectorEvent, type TurnEnd, type TurnEndReason, type TurnDetectorOptions } from './turns/turn-detector.ts';
import { FailureReason } from '../../lib/failure-reasons.ts';
import { questionKind, type QuestionKind } from './policy/question-kind.ts';

/**
 * The respondent's side of a session, for its whole length: every frame they send goes through
 * the turn detector, so they are heard while the bot speaks (barge-in) and while it thinks (a
 * respondent who goes on talking). Finished turns, with their text, wait in order for the
 * interview to take them.
 *
 * Barge-in: what the detector hears is fed to the barge-in machine (turns/barge-in.ts), which
 * owns every barge-in's state from the first voiced frames over the audible bot (an onset, or
 * `bargeInMinSpeechMs` of a turn) to its verdict, and calls `onBargeIn` (the first reaction) and
 * `onBargeInSettled` (interruption or backchannel, once per barge-in). The listener only adds what
 * needs the turn: a short sound over the bot is decided at its first pause, and a finished turn's
 * words settle its barge-in (only a backchannel shorter than `bargeInConfirmMs` lets the bot go on).
 *
 * Bounds: the detector keeps at most one utterance's worth of audio waiting to be classified, and
 * at most MAX_TEXTS_IN_FLIGHT turns wait for their text at once; beyond either, audio or whole turns
 * are dropped and `onBound` says so (the process is recycled after the session). A respondent never
 * gets there; a flood of audio does, and memory stays bounded while it lasts.
 *
 * Pauses (issue 21): at each pause inside a turn whose words so far are known (realtime text), a
 * watcher hears them (`watchPauses`: the dialogue starts its decision early), and hears when speech
 * resumes. Each silence that more speech follows, inside a turn or across a turn taken as ended
 * (`pausedFor`), teaches this session's pause profile (turns/pause-profile.ts).
 */
export interface HeardTurn {
  text: string;
  reason: TurnEndReason;
  sttMode: 'realtime' | 'batch';
  /** Wall times: speech start, last speech, the end-of-turn decision, the final text. */
  startedAt: number;
  speechEndedAt: number;
  decidedAt: number;
  finalAt: number;
  speechMs: number;
  probability?: number;
  inferenceMs?: number;
  /** The turn began while the bot was audible and stopped it. */
  bargeIn: boolean;
  /** Silence added to the end of this turn from the respondent's own pauses (learned; held fragments only). */
  patienceExtraMs: number;
  /** A barge-in that was only a backchannel: the bot should go on. */
  backchannel: boolean;
}

export interface ListenerSettings {
  idleTimeoutSeconds: number;
  maxUtteranceSeconds: number;
  bargeIn: boolean;
  bargeInMinSpeechMs: number;
  bargeInConfirmMs: number;
  /** No audio at all for this long inside a turn ends it (as TURN_MAX_SILENCE_MS of silence would). */
  stallMs: number;
  /** Learning the respondent's pauses: the silence after which a turn may end, and the most learning adds (0: off). */
  pauseLearning: { baseMs: number; maxExtraMs: number };
  /**
   * How long a "finished" from the model waits for the words so far before it stands on its own.
   * Waiting costs the reply nothing while the words are on their way: the turn's text is those same
   * words, and the reply cannot start before them. A recogniser that decodes a pause in more than
   * this (a self-hosted one on a CPU) lets a "finished" end the turn unchecked.
   */
  wordsWaitMs: number;
}

export interface ListenerOptions {
  room: BotRoom;
  detector: Omit<TurnDetectorOptions, 'onEvent'>;
  transcriber: TurnTranscriber;
  playback: Playback;
  settings: ListenerSettings;
  /** The interview's language: the words' check of an unfinished turn knows English words. */
  language?: string;
  signal: AbortSignal;
  /** Respondent speech over the bot: stop talking now (or pause, BARGE_IN_MODE=pause). */
  onBargeIn(): void;
  /**
   * What that speech turned out to be: an `interruption` (speech of BARGE_IN_CONFIRM_MS, or words
   * that are not a backchannel, said as soon as known) or a `backchannel`. Said once per barge-in.
   */
  onBargeInSettled?(outcome: 'interruption' | 'backchannel'): void;
  /** The respondent started a turn (the providers' connections are warmed, issue 21). */
  onSpeechStart?(): void;
  /** A turn ended at the utterance bound (the respondent sent too much). */
  onBound?(): void;
  /** A turn that produced no words, or failed to transcribe: it is dropped, and said here. */
  onDropped?(reason: string): void;
  clock?: () => number;
}

/** Turns being transcribed at once (each holds its audio until then). */
const MAX_TEXTS_IN_FLIGHT = 3;
/** How long a pause's words may take to come in and still be given to the watcher (the turn may end first). */
const PAUSE_WORDS_WAIT_MS = 1500;

/** The words of a turn so far, at a pause in it (realtime text only). */
export interface PauseWords {
  words: string;
  /** When the last speech before the pause was heard. */
  speechEndedAt: number;
}

export interface PauseWatcher {
  pause(words: PauseWords): void;
  /** Speech came back after the pause (the words will change). */
  resume(): void;
}

type Waiter = { resolve(turn: HeardTurn): void; reject(err: Error): void; since: number };

/** What the dialogue needs from the listener (a test can stand in for it). */
export interface Hearing {
  readonly busy: boolean;
  nextTurn(since: number, onStale?: (turn: HeardTurn) => void): Promise<HeardTurn>;
  speechStarted(): { promise: Promise<void>; cancel(): void };
  /** Pauses inside turns, with their words when known (one watcher). */
  watchPauses?(watcher: PauseWatcher): void;
  /** The respondent went on after a turn taken as ended, after this much silence (it teaches the pause profile). */
  pausedFor?(silenceMs: number): void;
  /** The bot asked this (a question or a follow-up): whether it is open or closed tells how patient to be (policy/question-kind.ts). */
  expectAnswerTo?(question: string): void;
}

export class Listener implements Hearing {
  private readonly options: ListenerOptions;
  private readonly detector: TurnDetector;
  private readonly clock: () => number;
  private readonly done: HeardTurn[] = [];
  private waiter: Waiter | null = null;
  private pendingTexts = 0;
  private turnStartedAt = 0;
  /** Speech over the bot, from its onset to the verdict (turns/barge-in.ts). */
  private readonly bargeIn: BargeIn;
  private maxTimer: NodeJS.Timeout | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly speechWaiters = new Set<() => void>();
  private stallTimer: NodeJS.Timeout | undefined;
  private readonly pauses: PauseProfile;
  private pauseWatcher: PauseWatcher | null = null;
  /** Changes at every pause, resume and turn boundary: words that come in late for their pause are not given. */
  private pauseGeneration = 0;
  /** The words of the turn so far, from the last pause (null: not in, or speech came back since). */
  private pauseWords: string | null = null;
  private question: QuestionKind = 'open';
  private arrivals = 0;
  private closed = false;
  private readonly onAudio = (pcm: Buffer) => {
    this.detector.push(pcm);
    // A respondent whose audio stops mid-turn (a muted or dropped track) has stopped speaking. The
    // stall is counted from when the audio so far has been classified, not from its arrival: a
    // burst (a whole answer at once, a network stall letting go) can take longer to classify than
    // the stall itself, and its turn may only start once the last of it is in.
    const arrival = ++this.arrivals;
    clearTimeout(this.stallTimer);
    void this.detector.drained().then(() => {
      if (arrival !== this.arrivals || this.closed) return;
      this.stallTimer = setTimeout(() => this.detector.forceEnd('silence'), this.options.settings.stallMs);
    });
  };

  constructor(options: ListenerOptions) {
    this.options = options;
    this.clock = options.clock ?? Date.now;
    this.pauses = new PauseProfile(options.settings.pauseLearning);
    const { playback, settings } = options;
    this.bargeIn = new BargeIn(
      { enabled: settings.bargeIn, minSpeechMs: settings.bargeInMinSpeechMs, confirmMs: settings.bargeInConfirmMs },
      {
        get audible() {
          return playback.audible;
        },
        stop: () => options.onBargeIn(),
        settled: (outcome) => options.onBargeInSettled?.(outcome),
      },
    );
    this.detector = new TurnDetector({
      ...options.detector,
      patience: this.pauses,
      onEvent: (e) => this.onEvent(e),
      onOverflow: () => options.onBound?.(),
      wordsUnfinished: async () => {
        const generation = this.pauseGeneration;
        const text = await options.transcriber.textSoFar(options.settings.wordsWaitMs);
        if (generation === this.pauseGeneration && text !== null) this.pauseWords = text.trim();
        return text !== null && wordsUnfinished(text, options.language);
      },
      wordsSoFar: () => this.pauseWords,
      questionKind: () => this.question,
      ...(options.language ? { language: options.language } : {}),
    });
    options.room.on('audio', this.onAudio);
    options.transcriber.warm();
  }

  /** Respondent audio received and not yet classified (bounded: one utterance's worth). */
  get backlogBytes(): number {
    return this.detector.backlogBytes;
  }

  /** Whether the respondent is talking now, or a turn of theirs is still being transcribed. */
  get busy(): boolean {
    return this.detector.speaking || this.pendingTexts > 0;
  }

  /**
   * The next finished turn that started at or after `since` (earlier ones, said over something
   * that was not a question, are passed to `onStale` and dropped). Fails with idle_timeout when the
   * respondent says nothing for IDLE_TIMEOUT_SECONDS after the bot has audibly finished.
   */
  nextTurn(since: number, onStale?: (turn: HeardTurn) => void): Promise<HeardTurn> {
    while (this.done.length > 0) {
      const turn = this.done.shift()!;
      if (turn.startedAt >= since || turn.backchannel) return Promise.resolve(turn);
      onStale?.(turn);
    }
    return new Promise<HeardTurn>((resolve, reject) => {
      this.waiter = { resolve, reject, since };
      this.armIdle();
    });
  }

  /**
   * Settles when the respondent next starts to speak (at once if they are speaking now);
   * `cancel` stops waiting.
   */
  speechStarted(): { promise: Promise<void>; cancel(): void } {
    if (this.detector.speaking) return { promise: Promise.resolve(), cancel: () => undefined };
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    this.speechWaiters.add(resolve);
    return { promise, cancel: () => void this.speechWaiters.delete(resolve) };
  }

  watchPauses(watcher: PauseWatcher): void {
    this.pauseWatcher = watcher;
  }

  pausedFor(silenceMs: number): void {
    this.pauses.record(silenceMs);
  }

  expectAnswerTo(question: string): void {
    this.question = questionKind(question, this.options.language);
  }

  close(): void {
    this.closed = true;
    this.pauseWatcher = null;
    this.speechWaiters.clear();
    clearTimeout(this.maxTimer);
    clearTimeout(this.idleTimer);
    clearTimeout(this.stallTimer);
    this.options.room.off('audio', this.onAudio);
    this.detector.close();
    this.options.transcriber.close();
  }

  private armIdle(): void {
    clearTimeout(this.idleTimer);
    const wait = this.options.settings.idleTimeoutSeconds * 1000 + this.options.playback.remainingMs;
    this.idleTimer = setTimeout(() => {
      if (!this.waiter) return;
      // Audio that has arrived but is not classified yet (a burst) is not silence: wait for it.
      if (this.busy || this.detector.classifying) return this.armIdle();
      const { reject } = this.waiter;
      this.waiter = null;
      reject(
        new SessionEnd(
          FailureReason.idle_timeout,
          'timeout',
          `The respondent said nothing for ${this.options.settings.idleTimeoutSeconds} s.`,
        ),
      );
    }, wait);
  }

  private onEvent(event: DetectorEvent): void {
    const { transcriber, settings } = this.options;
    switch (event.type) {
      case 'onset':
        // Speech may be starting over the bot: the first reaction is to pause its voice (pause mode
        // only: the plan sets no onset otherwise); the turn that follows, or none, settles it.
        return this.bargeIn.onset();
      case 'onset_end':
        // Too short to be a turn (a click, a breath): the voice goes on from where it paused.
        return this.bargeIn.onsetEnded();
      case 'speech_start':
        this.pauseGeneration++;
        this.pauseWords = null;
        // When speech was recognised as such (not the preroll's start): a respondent who answers the
        // moment a short question ends must not have their answer dated before the question.
        this.turnStartedAt = event.at;
        transcriber.speechStart(event.preroll);
        clearTimeout(this.maxTimer);
        this.maxTimer = setTimeout(() => this.detector.forceEnd('max'), settings.maxUtteranceSeconds * 1000);
        for (const wake of this.speechWaiters) wake();
        this.speechWaiters.clear();
        this.options.onSpeechStart?.();
        // A voice paused at the onset is this turn's barge-in, settled as any other.
        this.bargeIn.turnStarted(this.detector.currentSpeechMs);
        return;
      case 'audio':
        transcriber.audio(event.pcm);
        this.bargeIn.heard(this.detector.currentSpeechMs);
        return;
      case 'pause':
        transcriber.pause();
        this.givePauseWords(event.speechEndedAt);
        if (this.bargeIn.decideAtPause(this.detector.currentSpeechMs)) this.detector.forceEnd('silence');
        return;
      case 'resume':
        transcriber.resume();
        this.pauseGeneration++;
        this.pauseWords = null;
        this.pauseWatcher?.resume();
        return;
      case 'turn_end':
        this.pauseGeneration++;
        this.pauseWords = null;
        clearTimeout(this.maxTimer);
        if (event.end.reason === 'max') this.options.onBound?.();
        void this.finishTurn(event.end, this.turnStartedAt, this.bargeIn.turnEnded());
        return;
    }
  }

  /**
   * The words so far, if they come in before the pause is over (realtime text only): to the
   * endpointing policy (their count and their end), and to the watcher.
   */
  private givePauseWords(speechEndedAt: number): void {
    const generation = ++this.pauseGeneration;
    void this.options.transcriber.textSoFar(PAUSE_WORDS_WAIT_MS).then((words) => {
      if (generation !== this.pauseGeneration || this.closed || !words || words.trim() === '') return;
      this.pauseWords = words.trim();
      this.detector.wordsArrived();
      this.pauseWatcher?.pause({ words: words.trim(), speechEndedAt });
    });
  }

  /** A turn's barge-in (if any) settled: only its first verdict counts. */
  private settle(ticket: BargeInTicket | null, outcome: 'interruption' | 'backchannel'): void {
    if (ticket) this.bargeIn.settle(ticket, outcome);
  }

  private async finishTurn(end: TurnEnd, startedAt: number, ticket: BargeInTicket | null): Promise<void> {
    // A barge-in is always settled, so a paused voice never stays paused: a turn dropped unheard
    // lets it go on, a failure stops it.
    const bargeIn = ticket !== null;
    if (this.pendingTexts >= MAX_TEXTS_IN_FLIGHT) {
      this.settle(ticket, 'backchannel');
      this.options.transcriber.discard();
      this.options.onBound?.();
      return this.options.onDropped?.('too many turns waiting for their text');
    }
    this.pendingTexts++;
    try {
      const { text, mode } = await this.options.transcriber.finish(end.audio);
      const backchannel = bargeIn && end.speechMs < this.options.settings.bargeInConfirmMs && isBackchannel(text);
      this.settle(ticket, backchannel || text.trim() === '' ? 'backchannel' : 'interruption');
      if (!backchannel && text.trim() === '') return this.options.onDropped?.('no words');
      this.deliver({
        text: text.trim(),
        reason: end.reason,
        sttMode: mode,
        startedAt,
        speechEndedAt: end.speechEndedAt,
        decidedAt: end.at,
        finalAt: this.clock(),
        speechMs: end.speechMs,
        ...(end.probability !== undefined ? { probability: end.probability, inferenceMs: end.inferenceMs } : {}),
        bargeIn,
        backchannel,
        patienceExtraMs: end.patienceExtraMs,
      });
    } catch (err) {
      this.settle(ticket, 'interruption');
      if (this.waiter) {
        const { reject } = this.waiter;
        this.waiter = null;
        clearTimeout(this.idleTimer);
        reject(err as Error);
      } else if (!this.options.signal.aborted) this.options.onDropped?.((err as Error).message);
    } finally {
      this.pendingTexts--;
    }
  }

  private deliver(turn: HeardTurn): void {
    const waiter = this.waiter;
    if (waiter && (turn.startedAt >= waiter.since || turn.backchannel)) {
      this.waiter = null;
      clearTimeout(this.idleTimer);
      waiter.resolve(turn);
      return;
    }
    this.done.push(turn);
  }
}
