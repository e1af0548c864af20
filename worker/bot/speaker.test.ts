import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryRoom } from '../../test/fakes/memory-room.ts';
import { scriptedProviders } from '../../test/fakes/scripted-providers.ts';
import { ProviderError } from '../providers/errors.ts';
import { Playback } from './playback.ts';
import { Speaker } from './speaker.ts';

/**
 * The bot's voice on its own, on fake timers: sentences synthesised ahead play with no provider
 * round trip, an interruption keeps the sentences not yet heard (from the one playing), and a
 * sentence prepared ahead that failed only matters if it is spoken.
 */
function voice(script: Parameters<typeof scriptedProviders>[0] = {}) {
  const room = new MemoryRoom();
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
  return { room, providers, playback, speaker, firstBytes };
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
});
