import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { speak, spokenTrack } from './speech.ts';

/**
 * Test speech is repeatable: the same phrase makes the same bytes on every run. sox dithered by
 * default, so each conversion differed a little, and a turn model's score on a test answer moved
 * across its bound (0.779 against 0.8) on one run in several hundred (docs/testing.md).
 */
const dir = mkdtempSync(join(tmpdir(), 'speech-repeat-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const digest = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

describe('test speech is byte-identical from run to run', () => {
  it('speak() makes the same WAV twice, at every speed the tests use', () => {
    for (const wordsPerMinute of [160, 175, 190]) {
      const a = join(dir, `a-${wordsPerMinute}.wav`);
      const b = join(dir, `b-${wordsPerMinute}.wav`);
      speak('I liked the onboarding a lot.', a, { wordsPerMinute });
      speak('I liked the onboarding a lot.', b, { wordsPerMinute });
      const bytes = readFileSync(a);
      expect(bytes.length).toBeGreaterThan(10_000); // real speech, not an empty file
      expect(digest(readFileSync(b)), `${wordsPerMinute} wpm`).toBe(digest(bytes));
    }
  });

  it('a whole respondent track is the same twice', () => {
    const answers = ['Yes, I liked it.', { parts: ['What I liked was,', 'the price.'], pauseMs: 900 }];
    const first = spokenTrack(answers, { leadMs: 300, gapMs: 800, dir: mkdtempSync(join(dir, 't1-')) });
    const second = spokenTrack(answers, { leadMs: 300, gapMs: 800, dir: mkdtempSync(join(dir, 't2-')) });
    expect(digest(readFileSync(second.file))).toBe(digest(readFileSync(first.file)));
    expect(second.answers).toEqual(first.answers);
  });
});
