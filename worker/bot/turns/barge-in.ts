/**
 * Barge-in as one state machine: what respondent speech over the bot's voice does to it, from the
 * first voiced frames to the verdict. The listener feeds it what the detector hears; it drives the
 * voice (`BargeInVoice`: the speaker, through barge-in-voice.ts) and nothing else holds barge-in
 * state.
 *
 *   idle ──onset over the audible bot──▶ paused_at_onset ──silence, no turn──▶ resumed
 *     │                                       │
 *     │ BARGE_IN_MIN_SPEECH_MS of a turn       │ the turn starts (no second pause)
 *     │ over the audible bot                   ▼
 *     └─────────────────────────────────▶ confirming ──BARGE_IN_CONFIRM_MS of speech, words
 *                                              │        that are not a backchannel, or a failure──▶ interrupted
 *                                              └──a backchannel, or a turn dropped unheard──▶ resumed
 *
 * `interrupted` and `resumed` rest like `idle`: the next onset or turn over the audible bot starts a
 * new barge-in. Each barge-in belongs to the turn that carries it (a `BargeInTicket`), and is
 * settled once, possibly after the next turn has started (its words are transcribed meanwhile), so
 * a paused voice never stays paused. `stop()` is the first reaction: a pause in BARGE_IN_MODE=pause,
 * a stop in stop mode (the detector announces onsets only in pause mode: turns/turn-detector.ts).
 */
export type BargeInOutcome = 'interruption' | 'backchannel';

export type BargeInState =
  | { phase: 'idle' }
  | { phase: 'paused_at_onset' }
  | { phase: 'confirming'; ticket: BargeInTicket }
  | { phase: 'interrupted' }
  | { phase: 'resumed' };

/** One barge-in, carried by its turn until it is settled. */
export interface BargeInTicket {
  readonly outcome: BargeInOutcome | null;
}

export interface BargeInSettings {
  /** BARGE_IN. */
  enabled: boolean;
  /** BARGE_IN_MIN_SPEECH_MS: speech of a started turn over the audible bot that is a barge-in. */
  minSpeechMs: number;
  /** BARGE_IN_CONFIRM_MS: speech this long is an interruption whatever its words. */
  confirmMs: number;
}

/** What the machine drives: the bot's voice. */
export interface BargeInVoice {
  /** Whether the bot can be heard now (its audio is still playing at the respondent). */
  readonly audible: boolean;
  /** The first reaction to speech over the bot: pause it (or stop it, in stop mode). */
  stop(): void;
  /** The verdict on that speech: a paused voice goes on after a backchannel and ends on an interruption. */
  settled(outcome: BargeInOutcome): void;
}

class Ticket implements BargeInTicket {
  outcome: BargeInOutcome | null = null;
}

export class BargeIn {
  private readonly settings: BargeInSettings;
  private readonly voice: BargeInVoice;
  private current: BargeInState = { phase: 'idle' };
  /** The barge-in of the turn in progress (null: none, or no turn). */
  private turn: Ticket | null = null;

  constructor(settings: BargeInSettings, voice: BargeInVoice) {
    this.settings = settings;
    this.voice = voice;
  }

  get state(): BargeInState {
    return this.current;
  }

  /** Whether the turn in progress began over the bot and stopped it. */
  get inTurn(): boolean {
    return this.turn !== null;
  }

  /** A voiced run before any turn (BARGE_IN_PAUSE_MS): pause the audible bot at once. */
  onset(): void {
    if (!this.settings.enabled || !this.voice.audible) return;
    this.current = { phase: 'paused_at_onset' };
    this.voice.stop();
  }

  /** Silence followed the onset and no turn started (a click, a breath): the voice goes on. */
  onsetEnded(): void {
    if (this.current.phase !== 'paused_at_onset') return;
    this.current = { phase: 'resumed' };
    this.voice.settled('backchannel');
  }

  /** A turn started with `speechMs` of speech: a voice paused at its onset makes it this turn's barge-in. */
  turnStarted(speechMs: number): void {
    this.turn = null;
    if (this.current.phase === 'paused_at_onset') {
      this.turn = new Ticket();
      this.current = { phase: 'confirming', ticket: this.turn };
    }
    this.check(speechMs);
  }

  /** More of the turn was heard: `speechMs` of speech in it so far. */
  heard(speechMs: number): void {
    this.check(speechMs);
    // Enough speech over the bot is an interruption whatever its words: said without waiting.
    if (this.turn && speechMs >= this.settings.confirmMs) this.settle(this.turn, 'interruption');
  }

  /**
   * A pause in the turn: whether to decide the turn now. A short sound over the bot followed by a
   * pause ("mm-hm", "no") is judged at once, so the bot goes on (or answers) without waiting out a
   * thinking pause.
   */
  decideAtPause(speechMs: number): boolean {
    return this.turn !== null && speechMs < this.settings.confirmMs;
  }

  /** The turn ended: its barge-in (null: none), to be settled once its words are known. */
  turnEnded(): BargeInTicket | null {
    const ticket = this.turn;
    this.turn = null;
    return ticket;
  }

  /** The verdict on a turn's barge-in; only the first counts. */
  settle(ticket: BargeInTicket, outcome: BargeInOutcome): void {
    if (!(ticket instanceof Ticket) || ticket.outcome !== null) return;
    ticket.outcome = outcome;
    if (this.current.phase === 'confirming' && this.current.ticket === ticket)
      this.current = { phase: outcome === 'interruption' ? 'interrupted' : 'resumed' };
    this.voice.settled(outcome);
  }

  private check(speechMs: number): void {
    if (!this.settings.enabled || this.turn || !this.voice.audible || speechMs < this.settings.minSpeechMs) return;
    this.turn = new Ticket();
    this.current = { phase: 'confirming', ticket: this.turn };
    this.voice.stop();
  }
}
