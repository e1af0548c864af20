import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryRoom } from '../../test/fakes/memory-room.ts';
import { scriptedProviders } from '../../test/fakes/scripted-providers.ts';
import { speakerVoice } from './barge-in-voice.ts';
import type { BotEvent } from '../telemetry/bot-events.ts';
import type { InterruptionMode } from './policy/turn-policy.ts';
import { Playback } from './playback.ts';
import { Speaker } from './speaker.ts';
import { BargeIn } from './turns/barge-in.ts';

/**
 * The barge-in machine driving a real speaker into a room in memory, on fake timers (the clock the
 * speaker and its playback take): what each transition does to the voice in each BARGE_IN_MODE.
 */
function session(mode: InterruptionMode) {
  const room = new MemoryRoom();
  const providers = scriptedProviders({ ttsFirstByteMs: 200, msPerWord: 250 });
  const playback = new Playback(() => Date.now());
  const speaker = new Speaker({
    room,
    tts: providers.tts,
    playback,
    signal: new AbortController().signal,
    clock: () => Date.now(),
    onFirstByte: () => undefined,
  });
  const events: BotEvent[] = [];
  const voice = speakerVoice({ speaker, room, mode, telemetry: (e) => void events.push(e) });
  const bargeIn = new BargeIn(
    { enabled: true, minSpeechMs: 120, confirmMs: 700 },
    {
      get audible() {
        return playback.audible;
      },
      ...voice,
    },
  );
  return { room, speaker, bargeIn, events };
}

beforeEach(() => {
  vi.useFakeTimers({ now: Date.UTC(2026, 10, 29, 4) });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('barge-in driving the voice', () => {
  it('pause mode: an onset pauses the voice, and silence after it resumes it where it paused, counted as no interruption', async () => {
    const { room, speaker, bargeIn, events } = session('pause');
    const speaking = speaker.speak('One two three four. Five six seven eight.');
    await vi.advanceTimersByTimeAsync(300);
    bargeIn.onset();
    expect(speaker.paused).toBe(true);
    expect(room.interrupts).toBe(1);
    await vi.advanceTimersByTimeAsync(100);
    bargeIn.onsetEnded();
    expect(speaker.paused).toBe(false);
    expect(room.states().at(-1)).toBe('speaking');
    expect((await speaking).interrupted).toBe(false);
    expect(events).toEqual([]);
  });

  it('pause mode: a turn over the voice pauses it once, and its confirmation stops it for good, counted once', async () => {
    const { speaker, bargeIn, events } = session('pause');
    const speaking = speaker.speak('One two three four. Five six seven eight.');
    await vi.advanceTimersByTimeAsync(300);
    bargeIn.turnStarted(128);
    expect(speaker.paused).toBe(true);
    bargeIn.heard(704);
    await vi.advanceTimersByTimeAsync(2000); // the synthesis under way ends
    expect((await speaking).interrupted).toBe(true);
    bargeIn.settle(bargeIn.turnEnded()!, 'interruption');
    expect(events).toEqual([{ type: 'interruption', kind: 'barge_in' }]);
    // The sentence that was playing is kept, to go on from.
    expect(speaker.takeInterrupted()[0]).toBe('One two three four.');
  });

  it('stop mode: the first reaction stops the voice for good, and a backchannel verdict changes nothing', async () => {
    const { speaker, bargeIn, events } = session('stop');
    const speaking = speaker.speak('One two three four. Five six seven eight.');
    await vi.advanceTimersByTimeAsync(300);
    bargeIn.turnStarted(128);
    expect(speaker.paused).toBe(false);
    await vi.advanceTimersByTimeAsync(2000); // the synthesis under way ends
    expect((await speaking).interrupted).toBe(true);
    bargeIn.settle(bargeIn.turnEnded()!, 'backchannel');
    expect(events).toEqual([{ type: 'interruption', kind: 'barge_in' }]);
  });
});
