import type { EventEmitter } from 'node:events';

/**
 * The bot's side of a room, whatever the transport: emits `audio` (PCM16 mono from the respondent at
 * the listening rate, 16 kHz), `joined`, `left`, `hangup` and `closed`; takes the bot's audio at
 * 24 kHz and the local-room control messages (docs/local-room-protocol.md). Each transport's
 * bot-room.ts implements it (worker/rooms/<name>/).
 */
export interface BotRoom extends EventEmitter {
  readonly respondentPresent: boolean;
  sendControl(msg: Record<string, unknown>): void;
  sendAudio(pcm: Buffer): void;
  /**
   * The respondent cut in: drop the bot's audio that is queued and not yet heard, at every hop
   * this transport has (its own queue, and the respondent's player through `{type: "interrupt"}`).
   */
  interrupt(): void;
  /**
   * Speech over the bot, not yet judged (issue 21): the audio is dropped as by interrupt(), but the
   * messages queued behind it (`audio_end`, `listening`) are held, and what is sent until resume()
   * goes ahead of them: the words may go on after a backchannel, and those messages mark their end.
   */
  pause(): void;
  /** Ends a pause: the held messages go out behind what was sent since (no audio, if it was an interruption). */
  resume(): void;
  close(): void;
  /** Settles once close() has let queued audio and messages out and left the room. */
  whenClosed(): Promise<void>;
}
