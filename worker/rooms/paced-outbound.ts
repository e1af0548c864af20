/**
 * The bot's outbound stream into a room, shared by the transports whose media play in real time
 * (LiveKit, Daily). The interview hands over whole utterances at once; the transport plays them at
 * real time. So audio and control messages wait in one ordered queue and go to the transport one at
 * a time: a control message keeps its place behind the audio before it (a caption, `listening` or
 * `ended` reaches the respondent with the words it belongs to), and an interruption can still drop
 * the voice that is queued and not yet handed over.
 *
 * `deliver` hands one item to the transport; when it returns a promise, the next item waits for it
 * (LiveKit's AudioSource pushes back that way). With `pace`, audio is handed over at most `leadMs`
 * ahead of the moment it plays (Daily's bridge plays in order and cannot skip, so whatever was handed
 * over would be heard). A failed delivery is dropped: the room reports its own end through `closed`.
 *
 * A pause (speech over the bot, not yet judged: issue 21) drops the queued audio like an interruption
 * but holds the control messages that were queued behind it: `audio_end` and `listening` belong to
 * the end of the words, and the words may go on after a backchannel. What is pushed while paused (the
 * resumed words, the `speaking` state before them) goes ahead of the held messages, so after
 * `resume()` they follow the voice again.
 */
export type OutboundItem = { kind: 'audio'; pcm: Buffer } | { kind: 'control'; msg: Record<string, unknown> } | { kind: 'leave' };

export interface PacedOutboundOptions {
  deliver(item: OutboundItem): void | Promise<void>;
  /** Real-time pacing of PCM16 mono audio at `sampleRate`; without it the transport paces. */
  pace?: { sampleRate: number; leadMs: number };
  now?: () => number;
}

export class PacedOutbound {
  private readonly items: OutboundItem[] = [];
  private readonly options: PacedOutboundOptions;
  private readonly now: () => number;
  /** When the audio handed over so far has played out (ms on `now`'s clock). */
  private playingUntil = 0;
  /** Set and cleared synchronously by run(), so a push never lands between a run's end and its flag. */
  private running = false;
  private drained: Promise<void> = Promise.resolve();
  private hold: { timer: NodeJS.Timeout; wake: () => void } | null = null;
  private pausedAt: { insertAt: number } | null = null;

  constructor(options: PacedOutboundOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
  }

  get length(): number {
    return this.items.length;
  }

  get paused(): boolean {
    return this.pausedAt !== null;
  }

  push(item: OutboundItem): void {
    // While paused, what comes goes ahead of the messages the pause holds (in the order it comes).
    if (this.pausedAt) this.items.splice(this.pausedAt.insertAt++, 0, item);
    else this.items.push(item);
    this.start();
  }

  /** Drops the queued audio (not control messages, not `leave`), ending a pause; returns how many pieces went. */
  dropAudio(): number {
    const dropped = this.removeAudio();
    // A control message that waited behind the dropped audio may go now.
    this.pausedAt = null;
    this.wake();
    this.start();
    return dropped;
  }

  /**
   * Drops the queued audio and holds everything else until `resume()` (or `dropAudio()`, `clear()`);
   * what is pushed meanwhile goes ahead of what is held. Returns how many pieces went.
   */
  pause(): number {
    const dropped = this.removeAudio();
    this.pausedAt = { insertAt: 0 };
    // A run waiting to pace the dropped audio looks again, and stops.
    this.wake();
    return dropped;
  }

  /** Ends a pause: the held messages go out behind what was pushed since. */
  resume(): void {
    this.pausedAt = null;
    this.start();
  }

  /** Drops everything queued and ends a pause; what is being delivered finishes. */
  clear(): void {
    this.items.length = 0;
    this.pausedAt = null;
    this.wake();
  }

  /** Settles when the queue is empty (or paused) and nothing is being delivered. */
  whenDrained(): Promise<void> {
    return this.drained;
  }

  private removeAudio(): number {
    const before = this.items.length;
    for (let i = this.items.length - 1; i >= 0; i--) if (this.items[i]!.kind === 'audio') this.items.splice(i, 1);
    return before - this.items.length;
  }

  private start(): void {
    if (!this.running && !this.pausedAt && this.items.length > 0) this.drained = this.run();
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      for (let item = this.items[0]; item && !this.pausedAt; item = this.items[0]) {
        if (item.kind === 'audio' && this.options.pace) {
          const waitMs = this.playingUntil - this.now() - this.options.pace.leadMs;
          // Look again after the wait: an interruption may have dropped this audio meanwhile.
          if (waitMs > 0) {
            await this.sleep(waitMs);
            continue;
          }
        }
        this.items.shift();
        const startedAt = this.now();
        try {
          const pending = this.options.deliver(item);
          if (pending) await pending;
        } catch {
          // The room went away mid-send; it says so through its own events.
        }
        if (item.kind === 'audio' && this.options.pace) {
          this.playingUntil = Math.max(this.playingUntil, startedAt) + (item.pcm.length / 2 / this.options.pace.sampleRate) * 1000;
        }
      }
    } finally {
      this.running = false;
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(this.hold?.timer);
        this.hold = null;
        resolve();
      };
      this.hold = { timer: setTimeout(wake, ms), wake };
    });
  }

  private wake(): void {
    this.hold?.wake();
  }
}
