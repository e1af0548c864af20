import { describe, expect, it } from 'vitest';
import { silencePcm } from '../../../lib/pcm.ts';
import { tonePcm } from '../../../test/fakes/audio.ts';
import { energyFrameVad } from './frame-vad.ts';
import { PauseProfile } from './pause-profile.ts';
import { TurnDetector, type DetectorEvent, type TurnDetectorSettings } from './turn-detector.ts';

/**
 * Learning a respondent's own pauses (issue 21): the profile alone, then the detector with it, fed
 * at a simulated clock (20 ms chunks), the end-of-turn model a scripted stand-in.
 */
const RATE = 16_000;
const tone = (ms: number) => tonePcm(ms, RATE, 220, 0.3);
const silence = (ms: number) => silencePcm(ms, RATE);

describe('a respondent\'s pause profile', () => {
  it('adds nothing until two long pauses, then their 75th percentile above the base, capped', () => {
    const profile = new PauseProfile({ baseMs: 200, maxExtraMs: 600 });
    profile.record(300); // a short pause: how most people speak, not counted
    profile.record(700);
    expect(profile.extraMs()).toBe(0);
    profile.record(640);
    expect(profile.extraMs()).toBe(700 - 200);
    profile.record(1500);
    profile.record(1500);
    expect(profile.extraMs()).toBe(600);
  });

  it('learns nothing when TURN_PAUSE_LEARNING_MAX_MS is 0', () => {
    const profile = new PauseProfile({ baseMs: 200, maxExtraMs: 0 });
    for (let i = 0; i < 5; i++) profile.record(1200);
    expect(profile.extraMs()).toBe(0);
  });

  it('forgets the oldest pauses, so one slow start does not slow a whole session', () => {
    const profile = new PauseProfile({ baseMs: 200, maxExtraMs: 600 });
    profile.record(1400);
    profile.record(1400);
    for (let i = 0; i < 12; i++) profile.record(520);
    expect(profile.extraMs()).toBe(320);
  });
});

const SETTINGS: TurnDetectorSettings = { minSpeechMs: 100, silenceMs: 700, modelSilenceMs: 200, maxSilenceMs: 1600, modelThreshold: 0.5, maxUtteranceBytes: 60 * RATE * 2, maxBacklogBytes: 60 * RATE * 2 };

/** One session's detector: the model says "not finished" in the first answer and "finished" after it. */
async function session(maxExtraMs: number) {
  let t = 1_000_000;
  let finished = false;
  const ends: Array<Extract<DetectorEvent, { type: 'turn_end' }>['end']> = [];
  const detector = new TurnDetector({
    vad: energyFrameVad(-45),
    model: { completion: () => Promise.resolve(finished ? 0.9 : 0.1) },
    settings: SETTINGS,
    patience: new PauseProfile({ baseMs: 200, maxExtraMs }),
    clock: () => t,
    onEvent: (e) => {
      if (e.type === 'turn_end') ends.push(e.end);
    },
  });
  const play = async (pcm: Buffer) => {
    for (let i = 0; i < pcm.length; i += 640) {
      t += 20;
      detector.push(pcm.subarray(i, i + 640));
      await detector.drained();
      await new Promise((r) => setImmediate(r));
    }
  };
  // The first answer: two thinking pauses of 900 ms, then the longest silence (grown by what was learned) ends it.
  await play(Buffer.concat([tone(600), silence(900), tone(600), silence(900), tone(600), silence(2300)]));
  finished = true;
  // The second answer: the model says "finished" at the commit point.
  await play(Buffer.concat([tone(600), silence(1500)]));
  return ends;
}

describe('the detector with a learned patience', () => {
  it('waits longer before a long pauser\'s turn ends, and only as long as the bound', async () => {
    const ends = await session(600);
    expect(ends).toHaveLength(2);
    expect(ends[1]!.reason).toBe('model');
    // Learned: 900 ms pauses, 700 above the 200 ms commit point, capped at 600.
    expect(ends[1]!.patienceExtraMs).toBe(600);
    expect(ends[1]!.at - ends[1]!.speechEndedAt).toBeGreaterThanOrEqual(200 + 600);
    expect(ends[1]!.at - ends[1]!.speechEndedAt).toBeLessThan(200 + 600 + 100);
  });

  it('with TURN_PAUSE_LEARNING_MAX_MS=0 ends the turn at the commit point, as before', async () => {
    const ends = await session(0);
    expect(ends[1]!.reason).toBe('model');
    expect(ends[1]!.patienceExtraMs).toBe(0);
    expect(ends[1]!.at - ends[1]!.speechEndedAt).toBeLessThan(200 + 100);
  });
});
