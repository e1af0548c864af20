/**
 * One respondent's own pauses, learned during one session (issue 21, TURN_PAUSE_LEARNING_MAX_MS):
 * the silences inside their answers that were followed by more speech (a thinking pause the turn
 * survived, or a turn taken as ended that they went on from). A respondent who pauses long gets
 * more patience before their turn may end: the 75th percentile of their recent long pauses, less
 * the silence after which a turn may end anyway (`baseMs`), capped at `maxExtraMs`.
 *
 * Only pauses of at least LONG_PAUSE_MS (and at least `baseMs`) count: shorter ones are how most
 * people speak, and the end-of-turn model and the words already hold them; counting them would slow
 * every respondent's turns. Two long pauses are needed before anything changes, and only the last
 * KEEP count, so a respondent who paused long once, early on, is not waited for all session. Each
 * listener (one per session) has its own profile: nothing carries over to the next respondent.
 */
export interface PausePatience {
  /** A silence inside a turn, followed by more speech from the same respondent. */
  record(silenceMs: number): void;
  /** Extra silence, now, before this respondent's turn may end (0 until learned). */
  extraMs(): number;
}

export interface PauseProfileOptions {
  /** The silence after which a turn may end without learning (the commit point, or VAD_SILENCE_MS). */
  baseMs: number;
  /** The most that learning may add; 0: learning is off. */
  maxExtraMs: number;
}

const LONG_PAUSE_MS = 500;
const KEEP = 12;
const MIN_PAUSES = 2;
const QUANTILE = 0.75;

export class PauseProfile implements PausePatience {
  private readonly options: PauseProfileOptions;
  private readonly pauses: number[] = [];

  constructor(options: PauseProfileOptions) {
    this.options = options;
  }

  record(silenceMs: number): void {
    if (this.options.maxExtraMs <= 0 || silenceMs < Math.max(LONG_PAUSE_MS, this.options.baseMs)) return;
    this.pauses.push(silenceMs);
    if (this.pauses.length > KEEP) this.pauses.shift();
  }

  extraMs(): number {
    if (this.pauses.length < MIN_PAUSES) return 0;
    const sorted = [...this.pauses].sort((a, b) => a - b);
    const typical = sorted[Math.ceil(QUANTILE * sorted.length) - 1]!;
    return Math.min(this.options.maxExtraMs, Math.max(0, Math.round(typical - this.options.baseMs)));
  }
}
