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

describe("a respondent's pause profile", () => {
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

/** A hold of 1 s (TURN_HOLD_MS), so a 600 ms answer (no words: its voiced time counts) is a held fragment and a 3 s one is not. */
const SETTINGS: TurnDetectorSettings = {
  minSpeechMs: 100,
  silenceMs: 700,
  modelSilenceMs: 200,
  maxSilenceMs: 1600,
  modelThreshold: 0.5,
  maxUtteranceBytes: 60 * RATE * 2,
  maxBacklogBytes: 60 * RATE * 2,
  holdMs: 1000,
  holdMaxWords: 7,
  holdMaxVoicedMs: 2500,
};

/**
 * One session's detector: the model says "not finished" in the first answer and "finished" after
 * it. The first answer has two thinking pauses of 1400 ms (400 above the hold), then the longest
 * silence ends it; then a short answer and a long one, each followed by silence.
 */
async function session(maxExtraMs: number) {
  let t = 1_000_000;
  let finished = false;
  const ends: Array<Extract<DetectorEvent, { type: 'turn_end' }>['end']> = [];
  const detector = new TurnDetector({
    vad: energyFrameVad(-45),
    model: { completion: () => Promise.resolve(finished ? 0.9 : 0.1) },
    settings: SETTINGS,
    patience: new PauseProfile({ baseMs: 1000, maxExtraMs }),
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
  await play(Buffer.concat([tone(600), silence(1400), tone(600), silence(1400), tone(600), silence(2500)]));
  finished = true;
  await play(Buffer.concat([tone(600), silence(2500)]));
  await play(Buffer.concat([tone(3000), silence(1000)]));
  return ends;
}

describe('the detector with a learned patience', () => {
  it("holds a long pauser's short answers longer, as long as the bound, and not their finished long answers (issue 40)", async () => {
    const ends = await session(600);
    expect(ends).toHaveLength(3);
    // The short answer: held (the hold, 1000 ms) plus what was learned (1400 ms pauses, 400 above it).
    expect(ends[1]).toMatchObject({ reason: 'model', held: true, patienceExtraMs: 400 });
    expect(ends[1]!.at - ends[1]!.speechEndedAt).toBeGreaterThanOrEqual(1000 + 400);
    expect(ends[1]!.at - ends[1]!.speechEndedAt).toBeLessThan(1000 + 400 + 100);
    // The long answer: the fast path, at the commit point; the learned patience costs it nothing.
    expect(ends[2]).toMatchObject({ reason: 'model', held: false, patienceExtraMs: 0 });
    expect(ends[2]!.at - ends[2]!.speechEndedAt).toBeLessThan(200 + 100);
  });

  it('with TURN_PAUSE_LEARNING_MAX_MS=0 holds a short answer for the hold alone', async () => {
    const ends = await session(0);
    expect(ends[1]).toMatchObject({ reason: 'model', held: true, patienceExtraMs: 0 });
    expect(ends[1]!.at - ends[1]!.speechEndedAt).toBeLessThan(1000 + 100);
    expect(ends[2]!.at - ends[2]!.speechEndedAt).toBeLessThan(200 + 100);
  });
});
