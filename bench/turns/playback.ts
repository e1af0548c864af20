/**
 * The respondent's loudspeaker, simulated: the bot's audio (24 kHz PCM16) arrives faster than real
 * time and plays from its first arrival at real-time rate, one chunk after another, as the page's
 * queue does. An `interrupt` (C10) drops what is queued at once. Pure: the caller passes the clock.
 */
export const BOT_BYTES_PER_MS = (24_000 * 2) / 1000;

export class Playback {
  /** When the last queued sample will have played (ms, the caller's clock). */
  private playEnd = 0;
  private utterancePending = false;
  /** When the current utterance started to be heard (null before any). */
  utteranceHeardAt: number | null = null;

  /** A `state: speaking` came: the next audio starts a new utterance. */
  utteranceStarts(): void {
    this.utterancePending = true;
  }

  /**
   * Queues one chunk of bot audio received at `now`. Returns when this chunk starts to be heard if
   * it opens a new utterance (after what is still queued), else null.
   */
  push(bytes: number, now: number): number | null {
    const start = Math.max(now, this.playEnd);
    this.playEnd = start + bytes / BOT_BYTES_PER_MS;
    if (!this.utterancePending) return null;
    this.utterancePending = false;
    this.utteranceHeardAt = start;
    return start;
  }

  /** Drops everything queued: silence from `now`. */
  drop(now: number): void {
    this.playEnd = Math.min(this.playEnd, now);
  }

  playing(now: number): boolean {
    return this.playEnd > now;
  }

  /** When the queued audio ends (in the past when nothing plays). */
  get endsAt(): number {
    return this.playEnd;
  }
}
