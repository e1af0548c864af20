/**
 * When the bot's voice is audible at the respondent. The bot hands audio to the room faster than
 * real time; the respondent hears it in order, in real time, from when it arrives. So what was sent
 * plays until `until`: the listener uses that for barge-in (speech while the bot is audible) and
 * for the idle timeout (which starts when the bot has finished speaking).
 */
export class Playback {
  private until = 0;
  private readonly clock: () => number;

  constructor(clock: () => number = Date.now) {
    this.clock = clock;
  }

  /** `ms` of audio sent now; returns the wall time at which it starts playing. */
  add(ms: number): number {
    const now = this.clock();
    const starts = Math.max(this.until, now);
    this.until = starts + ms;
    return starts;
  }

  get audible(): boolean {
    return this.clock() < this.until;
  }

  get remainingMs(): number {
    return Math.max(0, this.until - this.clock());
  }

  /** Everything queued was dropped (an interruption). */
  stop(): void {
    this.until = Math.min(this.until, this.clock());
  }
}
