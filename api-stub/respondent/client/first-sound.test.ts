import { describe, expect, it } from 'vitest';
import { firstSoundDetector } from './first-sound.ts';

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
