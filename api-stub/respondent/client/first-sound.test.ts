import { describe, expect, it } from 'vitest';
import { firstSoundDetector, playoutWatch } from './first-sound.ts';

const LOUD = 0.1;
const QUIET = 0.001;

describe('firstSoundDetector', () => {
  it('fires once on the first sound, and again only when armed', () => {
    const d = firstSoundDetector(0.01);
    expect([QUIET, LOUD, LOUD].map((l) => d.sample(l))).toEqual([false, true, false]);
    d.arm();
    expect([QUIET, LOUD].map((l) => d.sample(l))).toEqual([false, true]);
  });

  it("does not take the last words' tail, still playing after audio_end, for the next utterance", () => {
    const d = firstSoundDetector(0.01);
    expect(d.sample(LOUD)).toBe(true); // the closing words start
    d.arm(); // audio_end arrives over the data channel while their tail still plays
    expect([LOUD, LOUD, LOUD].map((l) => d.sample(l))).toEqual([false, false, false]);
    // Quiet, then the next utterance.
    expect([QUIET, QUIET, LOUD].map((l) => d.sample(l))).toEqual([false, false, true]);
  });
});

describe('playoutWatch', () => {
  it('waits for the closing words that play after `ended` arrived, then for a quiet moment', () => {
    const w = playoutWatch(0.01, 800, 10_000);
    const ended = 1000;
    // Quiet at first (the closing has not reached the speaker yet): not done before 800 ms.
    for (let t = ended; t < ended + 300; t += 10) w.sample(QUIET, t);
    expect(w.done(ended, ended + 300)).toBe(false);
    // The closing plays for 1.5 s.
    for (let t = ended + 300; t < ended + 1800; t += 10) w.sample(LOUD, t);
    expect(w.done(ended, ended + 1800)).toBe(false);
    for (let t = ended + 1800; t < ended + 2600; t += 10) w.sample(QUIET, t);
    // The last loud sample was at +1790.
    expect(w.done(ended, ended + 2589)).toBe(false);
    expect(w.done(ended, ended + 2590)).toBe(true);
  });

  it('is done after quietMs when the words had already played out, and after maxMs whatever the level', () => {
    const quiet = playoutWatch(0.01, 800, 10_000);
    quiet.sample(LOUD, 500); // the closing's tail, before `ended`
    expect(quiet.done(1000, 1799)).toBe(false);
    expect(quiet.done(1000, 1800)).toBe(true);
    const noisy = playoutWatch(0.01, 800, 10_000);
    for (let t = 1000; t <= 11_000; t += 10) noisy.sample(LOUD, t);
    expect(noisy.done(1000, 10_990)).toBe(false);
    expect(noisy.done(1000, 11_000)).toBe(true);
  });
});
