import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PacedOutbound, type OutboundItem } from './paced-outbound.ts';

/**
 * The outbound queue the LiveKit and Daily bot rooms share. Fake timers drive the pacing: the clock
 * moves only when the test moves it, so no assertion depends on the machine's speed.
 */
const RATE = 24_000;
/** PCM16 mono at RATE lasting `ms`. */
const audio = (ms: number, fill = 0): OutboundItem => ({ kind: 'audio', pcm: Buffer.alloc(((RATE * ms) / 1000) * 2, fill) });
const control = (type: string): OutboundItem => ({ kind: 'control', msg: { type } });
const label = (item: OutboundItem): string =>
  item.kind === 'audio' ? `audio:${item.pcm[0]}` : item.kind === 'control' ? String(item.msg.type) : 'leave';

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('the paced outbound queue', () => {
  it('hands audio over at most the lead ahead of its playing, in order with the control messages behind it', async () => {
    const sent: Array<[number, string]> = [];
    const queue = new PacedOutbound({
      deliver: (item) => void sent.push([Date.now(), label(item)]),
      pace: { sampleRate: RATE, leadMs: 200 },
    });
    queue.push(control('state'));
    for (let i = 1; i <= 5; i++) queue.push(audio(100, i));
    queue.push(control('audio_end'));
    // 0 ms: the first three 100 ms pieces fit in the 200 ms lead (the third one exactly); the rest wait.
    expect(sent).toEqual([
      [0, 'state'],
      [0, 'audio:1'],
      [0, 'audio:2'],
      [0, 'audio:3'],
    ]);
    await vi.advanceTimersByTimeAsync(100);
    expect(sent.slice(4)).toEqual([[100, 'audio:4']]);
    await vi.advanceTimersByTimeAsync(100);
    // The control message goes as soon as the audio before it has been handed over, not later.
    expect(sent.slice(5)).toEqual([
      [200, 'audio:5'],
      [200, 'audio_end'],
    ]);
    expect(queue.length).toBe(0);
    await queue.whenDrained();
  });

  it('drops only the queued audio on an interruption, and a control message held behind it goes at once', async () => {
    const sent: string[] = [];
    const queue = new PacedOutbound({ deliver: (item) => void sent.push(label(item)), pace: { sampleRate: RATE, leadMs: 200 } });
    queue.push(audio(1000, 1));
    queue.push(audio(1000, 2));
    queue.push(control('caption'));
    queue.push(audio(1000, 3));
    queue.push({ kind: 'leave' });
    expect(sent).toEqual(['audio:1']);
    await vi.advanceTimersByTimeAsync(300);
    expect(sent).toEqual(['audio:1']); // still 700 ms of the first second ahead: audio:2 waits
    expect(queue.dropAudio()).toBe(2);
    await vi.advanceTimersByTimeAsync(0);
    expect(sent).toEqual(['audio:1', 'caption', 'leave']);
    await queue.whenDrained();
  });

  it('delivers one item at a time when the transport pushes back, and goes on after a failed delivery', async () => {
    const started: string[] = [];
    const pending: Array<() => void> = [];
    const queue = new PacedOutbound({
      deliver: (item) => {
        started.push(label(item));
        if (item.kind === 'control' && item.msg.type === 'broken') throw new Error('the room went away');
        return new Promise<void>((resolve, reject) =>
          pending.push(item.kind === 'audio' && item.pcm[0] === 2 ? () => reject(new Error('send failed')) : resolve),
        );
      },
    });
    queue.push(audio(20, 1));
    queue.push(audio(20, 2));
    queue.push(control('broken'));
    queue.push(control('ended'));
    expect(started).toEqual(['audio:1']);
    pending.shift()!();
    await vi.advanceTimersByTimeAsync(0);
    expect(started).toEqual(['audio:1', 'audio:2']);
    pending.shift()!(); // rejects
    await vi.advanceTimersByTimeAsync(0);
    // The throwing delivery is passed over like the rejected one; the queue carries on.
    expect(started).toEqual(['audio:1', 'audio:2', 'broken', 'ended']);
    let drained = false;
    void queue.whenDrained().then(() => (drained = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(drained).toBe(false);
    pending.shift()!();
    await vi.advanceTimersByTimeAsync(0);
    expect(drained).toBe(true);
  });

  it('takes an item pushed while it delivers (even from inside a delivery), and nothing after clear()', async () => {
    const sent: string[] = [];
    const queue = new PacedOutbound({
      deliver: (item) => {
        sent.push(label(item));
        if (label(item) === 'state') queue.push(control('caption'));
      },
      pace: { sampleRate: RATE, leadMs: 0 },
    });
    queue.push(control('state'));
    expect(sent).toEqual(['state', 'caption']);
    queue.push(audio(500, 1));
    queue.push(audio(500, 2));
    queue.push(control('ended'));
    expect(sent).toEqual(['state', 'caption', 'audio:1']);
    queue.clear();
    await queue.whenDrained(); // the wait for audio:2 ends with the clear, not after 500 ms
    expect(Date.now()).toBe(0);
    await vi.advanceTimersByTimeAsync(1000);
    expect(sent).toEqual(['state', 'caption', 'audio:1']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('on a pause holds the messages queued behind the dropped audio, and puts the audio of the resumed words ahead of them', async () => {
    const sent: string[] = [];
    const queue = new PacedOutbound({ deliver: (item) => void sent.push(label(item)), pace: { sampleRate: RATE, leadMs: 200 } });
    queue.push(audio(1000, 1));
    queue.push(audio(1000, 2));
    queue.push(control('audio_end'));
    queue.push(control('state'));
    await vi.advanceTimersByTimeAsync(300);
    expect(queue.pause()).toBe(1);
    expect(queue.paused).toBe(true);
    // Held: `audio_end` and `listening` belong to the end of the words, which are not over yet.
    await vi.advanceTimersByTimeAsync(2000);
    expect(sent).toEqual(['audio:1']);
    await queue.whenDrained();
    // A backchannel: the bot says it speaks again, the words go on from where they were paused, and
    // the held messages follow them.
    queue.push(control('speaking'));
    queue.push(audio(100, 7));
    queue.push(audio(100, 8));
    expect(sent).toEqual(['audio:1']);
    queue.resume();
    await vi.advanceTimersByTimeAsync(0);
    expect(sent).toEqual(['audio:1', 'speaking', 'audio:7', 'audio:8', 'audio_end', 'state']);
    expect(queue.paused).toBe(false);
    await queue.whenDrained();
  });

  it('lets the held messages go when a pause ends in an interruption (nothing more is said)', async () => {
    const sent: string[] = [];
    const queue = new PacedOutbound({ deliver: (item) => void sent.push(label(item)), pace: { sampleRate: RATE, leadMs: 200 } });
    queue.push(audio(1000, 1));
    queue.push(audio(1000, 2));
    queue.push(control('audio_end'));
    queue.pause();
    await vi.advanceTimersByTimeAsync(500);
    expect(sent).toEqual(['audio:1']);
    queue.resume();
    await vi.advanceTimersByTimeAsync(0);
    expect(sent).toEqual(['audio:1', 'audio_end']);
    // An interruption while paused ends the pause the same way.
    queue.push(audio(1000, 3)); // waits: audio:1 plays until 1000 ms
    queue.push(control('state'));
    expect(queue.pause()).toBe(1);
    queue.push(audio(100, 4)); // pushed while paused, then dropped with the interruption
    expect(queue.dropAudio()).toBe(1);
    await vi.advanceTimersByTimeAsync(0);
    expect(sent).toEqual(['audio:1', 'audio_end', 'state']);
    await queue.whenDrained();
  });
});
