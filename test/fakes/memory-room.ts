import { EventEmitter } from 'node:events';
import type { BotRoom } from '../../worker/bot/room-link.ts';

/**
 * A bot's room held in memory, for unit tests of the interview's stages: no transport, no socket.
 * The test plays the respondent: `join()`, `speak(pcm)` (frames on the clock the test advances) or
 * `burst(pcm)` (every chunk in one turn of the event loop, as a network stall delivers them). It
 * records what the bot sends: control messages, audio bytes, interruptions.
 */
const FRAME_BYTES = 640; // 20 ms at 16 kHz

export class MemoryRoom extends EventEmitter implements BotRoom {
  respondentPresent = false;
  readonly controls: Array<Record<string, unknown>> = [];
  /** The bot's audio, 24 kHz PCM16, in the order it was sent. */
  audioBytes = 0;
  interrupts = 0;
  /** The bot's audio dropped unplayed by interruptions, in ms (heard = sent - dropped). */
  droppedMs = 0;
  /** How many control messages had been sent at each interruption (where it falls among them). */
  readonly interruptedAfter: number[] = [];
  closed = false;
  /** When the bot's audio sent so far has played at the respondent (it plays in real time). */
  playingUntil = 0;
  private readonly watchers = new Set<(msg: Record<string, unknown>) => void>();

  join(): void {
    this.respondentPresent = true;
    this.emit('joined');
  }

  /** Calls `watch` on every control message from now on (the respondent's reactions). */
  onControl(watch: (msg: Record<string, unknown>) => void): void {
    this.watchers.add(watch);
  }

  /** The respondent's audio at real-time pace: one 20 ms frame per 20 ms of (fake) time. */
  speak(pcm: Buffer): Promise<void> {
    return new Promise((resolve) => {
      let offset = 0;
      const tick = () => {
        if (this.closed) return resolve();
        this.emit('audio', pcm.subarray(offset, offset + FRAME_BYTES));
        offset += FRAME_BYTES;
        if (offset >= pcm.length) return resolve();
        setTimeout(tick, 20);
      };
      tick();
    });
  }

  /** The respondent's audio all at once, in chunks of `chunkBytes`, synchronously. */
  burst(pcm: Buffer, chunkBytes = 300): void {
    for (let i = 0; i < pcm.length && !this.closed; i += chunkBytes) this.emit('audio', pcm.subarray(i, i + chunkBytes));
  }

  /** The bot's audio the respondent has heard or will hear, in ms. */
  heardMs(): number {
    return this.audioBytes / 48 - this.droppedMs;
  }

  states(): string[] {
    return this.controls.filter((c) => c.type === 'state').map((c) => String(c.state));
  }

  sendControl(msg: Record<string, unknown>): void {
    if (this.closed) return;
    this.controls.push(msg);
    for (const watch of this.watchers) watch(msg);
  }

  sendAudio(pcm: Buffer): void {
    if (this.closed) return;
    this.audioBytes += pcm.length;
    this.playingUntil = Math.max(this.playingUntil, Date.now()) + pcm.length / 48; // 24 kHz PCM16
  }

  /** As the real rooms: the page is told `interrupt` once (this room holds no queue to pause). */
  pause(): void {
    this.interrupt();
  }

  resume(): void {}

  interrupt(): void {
    this.interrupts++;
    this.interruptedAfter.push(this.controls.length);
    this.droppedMs += Math.max(0, this.playingUntil - Date.now());
    this.playingUntil = Date.now();
  }

  close(): void {
    this.closed = true;
  }

  whenClosed(): Promise<void> {
    return Promise.resolve();
  }
}
