import { describe, expect, it } from 'vitest';
import { PacedBotRoom } from './paced-bot-room.ts';
import { PacedOutbound, type OutboundItem } from './paced-outbound.ts';

/** A room whose transport records what reaches it; delivery parks on audio so that a queue builds up. */
class RecordingRoom extends PacedBotRoom {
  readonly heard: string[] = [];
  private parked: (() => void) | null = null;
  protected readonly outbound = new PacedOutbound({
    deliver: (item: OutboundItem) => {
      this.heard.push(item.kind === 'control' ? String(item.msg.type) : item.kind);
      if (item.kind === 'audio') return new Promise<void>((resolve) => (this.parked = resolve));
    },
  });
  push(item: OutboundItem): void {
    this.outbound.push(item);
  }
  playOut(): void {
    this.parked?.();
  }
  protected stopVoice(): void {
    this.heard.push('stop-voice');
  }
}
const audio: OutboundItem = { kind: 'audio', pcm: Buffer.alloc(4) };
const control = (type: string): OutboundItem => ({ kind: 'control', msg: { type } });
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('the paced bot room (LiveKit and Daily alike)', () => {
  it('interrupt drops the queued voice, stops the transport at once and lets the messages behind it go', async () => {
    const room = new RecordingRoom();
    for (const item of [audio, audio, control('audio_end')]) room.push(item);
    room.interrupt();
    room.playOut();
    await settle();
    expect(room.heard).toEqual(['audio', 'stop-voice', 'audio_end']);
  });

  it('pause drops the voice too but holds the messages behind it until resume, behind what came meanwhile', async () => {
    const room = new RecordingRoom();
    for (const item of [audio, audio, control('audio_end')]) room.push(item);
    room.pause();
    room.playOut();
    room.push(control('speaking'));
    await settle();
    expect(room.heard).toEqual(['audio', 'stop-voice']);
    room.resume();
    await settle();
    expect(room.heard).toEqual(['audio', 'stop-voice', 'speaking', 'audio_end']);
  });
});
