import { describe, expect, it } from 'vitest';
import { BargeIn, type BargeInOutcome, type BargeInSettings } from './barge-in.ts';

/**
 * The barge-in machine alone: what the listener would feed it (onsets, a turn's speech so far,
 * pauses, ends, verdicts) and what it does to a voice that records its calls. The listener's own
 * tests (listener.test.ts) drive it with real frames on fake timers.
 */
const SETTINGS: BargeInSettings = { enabled: true, minSpeechMs: 120, confirmMs: 700 };

function machine(settings: Partial<BargeInSettings> = {}) {
  const calls: Array<'stop' | BargeInOutcome> = [];
  const voice = { audible: true, stop: () => void calls.push('stop'), settled: (outcome: BargeInOutcome) => void calls.push(outcome) };
  return { bargeIn: new BargeIn({ ...SETTINGS, ...settings }, voice), voice, calls };
}

describe('the barge-in machine', () => {
  it('pauses the audible bot at an onset, and resumes it when silence follows with no turn', () => {
    const { bargeIn, calls } = machine();
    expect(bargeIn.state.phase).toBe('idle');
    bargeIn.onset();
    expect(bargeIn.state.phase).toBe('paused_at_onset');
    expect(calls).toEqual(['stop']);
    bargeIn.onsetEnded();
    expect(bargeIn.state.phase).toBe('resumed');
    expect(calls).toEqual(['stop', 'backchannel']);
    // An onset end with nothing paused does nothing.
    bargeIn.onsetEnded();
    expect(calls).toEqual(['stop', 'backchannel']);
  });

  it('does nothing at an onset while the bot is silent, or with barge-in off', () => {
    const silent = machine();
    silent.voice.audible = false;
    silent.bargeIn.onset();
    silent.bargeIn.onsetEnded();
    expect(silent.calls).toEqual([]);
    expect(silent.bargeIn.state.phase).toBe('idle');
    const off = machine({ enabled: false });
    off.bargeIn.onset();
    off.bargeIn.turnStarted(200);
    off.bargeIn.heard(800);
    expect(off.calls).toEqual([]);
    expect(off.bargeIn.turnEnded()).toBeNull();
  });

  it('makes a turn that follows an onset its barge-in without a second pause, confirmed by enough speech', () => {
    const { bargeIn, calls } = machine();
    bargeIn.onset();
    bargeIn.turnStarted(128);
    expect(bargeIn.state.phase).toBe('confirming');
    expect(bargeIn.inTurn).toBe(true);
    bargeIn.heard(672);
    expect(calls).toEqual(['stop']);
    bargeIn.heard(704);
    expect(bargeIn.state.phase).toBe('interrupted');
    bargeIn.heard(736);
    const ticket = bargeIn.turnEnded()!;
    expect(ticket.outcome).toBe('interruption');
    // The words come in later: the verdict was said once, and stays.
    bargeIn.settle(ticket, 'backchannel');
    expect(calls).toEqual(['stop', 'interruption']);
  });

  it('stops the bot on the frame that completes BARGE_IN_MIN_SPEECH_MS of a turn, not before', () => {
    const { bargeIn, calls } = machine({ minSpeechMs: 200 });
    bargeIn.turnStarted(128);
    bargeIn.heard(160);
    expect(calls).toEqual([]);
    expect(bargeIn.state.phase).toBe('idle');
    bargeIn.heard(200);
    expect(calls).toEqual(['stop']);
    bargeIn.heard(232);
    expect(calls).toEqual(['stop']);
  });

  it('decides a short sound over the bot at its first pause, and leaves other turns to their pauses', () => {
    const over = machine();
    over.bargeIn.turnStarted(160);
    expect(over.bargeIn.decideAtPause(160)).toBe(true);
    expect(over.bargeIn.decideAtPause(700)).toBe(false);
    const answer = machine();
    answer.voice.audible = false;
    answer.bargeIn.turnStarted(160);
    expect(answer.bargeIn.decideAtPause(160)).toBe(false);
    expect(answer.bargeIn.turnEnded()).toBeNull();
  });

  it("settles a turn's barge-in once its words are known, even after the next turn has started", () => {
    const { bargeIn, voice, calls } = machine();
    bargeIn.turnStarted(160);
    const first = bargeIn.turnEnded()!;
    expect(bargeIn.state).toEqual({ phase: 'confirming', ticket: first });
    // The voice is paused, so the next turn is not a barge-in of its own.
    voice.audible = false;
    bargeIn.turnStarted(160);
    expect(bargeIn.inTurn).toBe(false);
    bargeIn.settle(first, 'backchannel');
    expect(bargeIn.state.phase).toBe('resumed');
    expect(calls).toEqual(['stop', 'backchannel']);
    expect(bargeIn.turnEnded()).toBeNull();
  });

  it('starts a new barge-in after a verdict, when the bot speaks again', () => {
    const { bargeIn, calls } = machine();
    bargeIn.onset();
    bargeIn.onsetEnded();
    bargeIn.onset();
    bargeIn.turnStarted(128);
    bargeIn.settle(bargeIn.turnEnded()!, 'interruption');
    expect(bargeIn.state.phase).toBe('interrupted');
    expect(calls).toEqual(['stop', 'backchannel', 'stop', 'interruption']);
  });
});
