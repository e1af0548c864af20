import { EventEmitter } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryRoom } from '../../test/fakes/memory-room.ts';
import { scriptedProviders } from '../../test/fakes/scripted-providers.ts';
import { ProviderError } from '../providers/errors.ts';
import { PacedOutbound, type OutboundItem } from '../rooms/paced-outbound.ts';
import { Playback } from './playback.ts';
import type { BotRoom } from './room-link.ts';
import { Speaker } from './speaker.ts';

/**
 * The bot's voice on its own, on fake timers: sentences synthesised ahead play with no provider
 * round trip, an interruption keeps the sentences not yet heard (from the one playing), and a
 * sentence prepared ahead that failed only matters if it is spoken.
 */
function voice(script: Parameters<typeof scriptedProviders>[0] = {}, room: BotRoom & { audioBytes?: number } = new MemoryRoom()) {
  const providers = scriptedProviders({ ttsFirstByteMs: 200, msPerWord: 250, ...script });
  const playback = new Playback(() => Date.now());
  const firstBytes: Array<{ ms: number; error?: string }> = [];
  const speaker = new Speaker({
    room,
    tts: providers.tts,
    playback,
    signal: new AbortController().signal,
    clock: () => Date.now(),
    onFirstByte: (t0, t1, error) => firstBytes.push({ ms: t1 - t0, ...(error ? { error } : {}) }),
  });
  return { room: room as MemoryRoom, providers, playback, speaker, firstBytes };
}

/**
 * A room whose bot side queues as the LiveKit and Daily rooms do (the paced outbound queue, 200 ms
 * ahead of playing); `delivered` is what left the queue for the transport, in order.
 */
class QueuedRoom extends EventEmitter implements BotRoom {
  respondentPresent = true;
  readonly delivered: Array<{ control: string } | { audioMs: number }> = [];
  private readonly outbound = new PacedOutbound({
    deliver: (item: OutboundItem) => {
      if (item.kind === 'audio') this.delivered.push({ audioMs: item.pcm.length / 48 });
      else if (item.kind === 'control') this.delivered.push({ control: String(item.msg.state ?? item.msg.type) });
    },
    pace: { sampleRate: 24_000, leadMs: 200 },
  });
  sendControl(msg: Record<string, unknown>): void {
    this.outbound.push({ kind: 'control', msg });
  }
  sendAudio(pcm: Buffer): void {
    this.outbound.push({ kind: 'audio', pcm });
  }
  interrupt(): void {
    this.outbound.dropAudio();
  }
  pause(): void {
    this.outbound.pause();
  }
  resume(): void {
    this.outbound.resume();
  }
  close(): void {}
  whenClosed(): Promise<void> {
    return Promise.resolve();
  }
}

beforeEach(() => {
  vi.useFakeTimers({ now: Date.UTC(2026, 10, 25, 12) });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('the speaker', () => {
  it('plays words prepared ahead the moment they are due', async () => {
    const { speaker, firstBytes } = voice();
    speaker.prepare('What did you like?');
    await vi.advanceTimersByTimeAsync(500);
    const started = Date.now();
    const result = await speaker.speak('What did you like?');
    expect(result.firstAudioAt).toBe(started);
    expect(firstBytes).toEqual([{ ms: 200 }]);
  });

  it('stops on interrupt, and keeps the sentences from the one that was playing', async () => {
    const { speaker, room, playback } = voice();
    const speaking = speaker.speak('One two three four. Five six seven eight. Nine ten.');
    await vi.advanceTimersByTimeAsync(1000);
    const result = await speaking;
    expect(result.interrupted).toBe(false);
    // 1 s into the audio: the first sentence (1 s) has played, the second is playing.
    await vi.advanceTimersByTimeAsync(600);
    expect(playback.audible).toBe(true);
    speaker.interrupt();
    expect(room.interrupts).toBe(1);
    expect(playback.audible).toBe(false);
    expect(speaker.takeInterrupted()).toEqual(['Five six seven eight.', 'Nine ten.']);
    expect(speaker.takeInterrupted()).toEqual([]);
  });

  it('after a failure ahead, nothing more is prepared; a sentence is synthesised when due, and a failed one fails then', async () => {
    const failure = new ProviderError('tts', 'http', false, 'The text-to-speech provider refused the request.', 400);
    const { speaker, providers, firstBytes } = voice({ ttsFailsOn: { text: 'Thanks', error: failure } });
    speaker.prepare('Thanks, bye.');
    speaker.prepare('See you.');
    await vi.advanceTimersByTimeAsync(1000);
    // The failure ahead was nobody's yet, and the provider was not asked again for what came after.
    expect(providers.calls.tts).toEqual(['Thanks, bye.']);
    const later = speaker.speak('See you.');
    await vi.advanceTimersByTimeAsync(500);
    expect((await later).firstAudioAt).not.toBeNull();
    expect(providers.calls.tts).toEqual(['Thanks, bye.', 'See you.']);
    // Spoken, the prepared sentence's provider error is the session's.
    await expect(speaker.speak('Thanks, bye.')).rejects.toBe(failure);
    expect(firstBytes.map((f) => f.error ?? 'ok')).toEqual([failure.message, 'ok']);
  });

  it('pauses with the unheard audio held, and resumes from the frame that was playing (issue 21)', async () => {
    const { speaker, room, playback } = voice();
    // Sentence one (1 s of audio) is sent at 200 ms; sentence two is synthesised by 400 ms.
    const speaking = speaker.speak('One two three four. Five six seven eight.');
    let settled = false;
    void speaking.then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(300); // 100 ms of sentence one heard
    const sent = room.audioBytes;
    expect(speaker.pause()).toBe(true);
    expect(room.interrupts).toBe(1);
    expect(playback.audible).toBe(false);
    await vi.advanceTimersByTimeAsync(1000); // held: sentence two is written, but nothing goes out
    expect(room.audioBytes).toBe(sent);
    expect(settled).toBe(false);
    speaker.resume();
    expect((await speaking).interrupted).toBe(false);
    // Sent again: the 900 ms of sentence one not yet heard, from the frame that was playing, then
    // sentence two (1 s); the start of sentence one is not repeated.
    const again = (room.audioBytes - sent) / 48;
    expect(again).toBeGreaterThanOrEqual(1900);
    expect(again).toBeLessThanOrEqual(1920);
    expect(playback.remainingMs).toBe(again);
    expect(speaker.takeInterrupted()).toEqual([]);
  });

  it('interrupted while paused, sends nothing more and keeps the sentences from the one playing at the pause', async () => {
    const { speaker, room } = voice();
    const speaking = speaker.speak('One two three four. Five six seven eight. Nine ten.');
    await vi.advanceTimersByTimeAsync(1500); // all sent by 600 ms; the second sentence is playing
    expect((await speaking).interrupted).toBe(false);
    expect(speaker.pause()).toBe(true);
    const sent = room.audioBytes;
    speaker.interrupt();
    await vi.advanceTimersByTimeAsync(1000);
    expect(room.interrupts).toBe(1); // the pause already dropped the room's queue
    expect(room.audioBytes).toBe(sent);
    expect(speaker.takeInterrupted()).toEqual(['Five six seven eight.', 'Nine ten.']);
  });

  it('paused after its words were handed over, sends the end of them (`audio_end`, `listening`) only behind the resumed audio', async () => {
    const room = new QueuedRoom();
    const { speaker } = voice({}, room);
    // Written out by 200 ms (1 s of audio); the dialogue then sends the end of the words, which
    // waits in the room's queue behind the audio not yet handed over.
    const result = speaker.speak('One two three four.');
    await vi.advanceTimersByTimeAsync(250);
    expect((await result).interrupted).toBe(false);
    room.sendControl({ type: 'audio_end' });
    room.sendControl({ type: 'state', state: 'listening' });
    await vi.advanceTimersByTimeAsync(250); // 300 ms played
    expect(speaker.pause()).toBe(true);
    const atPause = room.delivered.length;
    await vi.advanceTimersByTimeAsync(500); // a backchannel, judged
    // Held while paused: the words are not over, so neither is the bot's turn.
    expect(room.delivered.slice(atPause)).toEqual([]);
    speaker.resume();
    await vi.advanceTimersByTimeAsync(2000);
    const after = room.delivered.slice(atPause);
    const audioAfter = after.filter((d) => 'audioMs' in d);
    expect(audioAfter.length).toBeGreaterThan(0);
    // The rest of the words went out again, and only then their end.
    expect(after.slice(audioAfter.length)).toEqual([{ control: 'audio_end' }, { control: 'listening' }]);
  });
});
