import { EventEmitter } from 'node:events';
import type { PacedOutbound } from './paced-outbound.ts';

/**
 * What the bot rooms whose voice plays in real time through a PacedOutbound (LiveKit, Daily) do
 * alike on speech over the bot: interrupt() drops the queued voice, pause() drops it too but holds
 * the messages queued behind it until resume(), and both stop the voice the transport already holds
 * and tell the respondent's page at once. Only that last step differs by transport (`stopVoice`).
 * The local room has no queue of its own (its page plays the audio), so it does not extend this.
 */
export abstract class PacedBotRoom extends EventEmitter {
  protected abstract readonly outbound: PacedOutbound;

  /** Drops the voice the transport holds and sends `{type: 'interrupt'}` to the page, ahead of any queue. */
  protected abstract stopVoice(): void;

  /** Drops the voice not yet played (ours and the transport's) and tells the respondent's page at once. */
  interrupt(): void {
    this.outbound.dropAudio();
    this.stopVoice();
  }

  /** As interrupt(), but the messages queued behind the voice wait for resume(). */
  pause(): void {
    this.outbound.pause();
    this.stopVoice();
  }

  resume(): void {
    this.outbound.resume();
  }
}
