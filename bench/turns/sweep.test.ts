import { describe, expect, it } from 'vitest';
import type { AnswerItem } from './answer-set.ts';
import type { ReplayOutcome } from './replay.ts';
import { lengthClass, scoreItem, summarizePoint } from './sweep.ts';

/** The turn sweep's scoring (bench/turns/sweep.ts): talk-overs, decisions and modelled waits, by kind and length. */
const item = (id: string, text: string, extra: Partial<AnswerItem> = {}): AnswerItem => ({
  id,
  kind: 'plain',
  text,
  pcm: Buffer.alloc(0),
  speech: { startMs: 100, endMs: 3000 },
  pauses: [],
  question: 'open',
  ...extra,
});
const outcome = (endAtMs: number | null, wordsAtMs: number | null = null): ReplayOutcome => ({
  endAtMs,
  reason: endAtMs === null ? null : 'silence',
  held: false,
  wordsAtMs,
});
const paused = (id: string, pauseMs: number, heldOut = false) =>
  item(id, 'We tried ... a few tools.', { kind: 'pause', pauses: [{ startMs: 800, endMs: 800 + pauseMs }], heldOut });

describe('the turn sweep scoring', () => {
  it('counts a turn that ends inside a thinking pause as a talk-over, and one after the answer as none', () => {
    expect(scoreItem(paused('p', 1500), outcome(2100), 300).talkOver).toBe(true);
    expect(scoreItem(paused('p', 1500), outcome(3200), 300).talkOver).toBe(false);
    expect(scoreItem(paused('p', 1500), outcome(null), 300).talkOver).toBe(false);
    // A pause answer has no wait: it is not a finished answer.
    expect(scoreItem(paused('p', 1500), outcome(3200), 300).waitMs).toBeNull();
  });

  it("models a finished answer's wait as the later of the end of the turn and the words plus the reply", () => {
    const long = item('l', 'We started with the free plan and upgraded after a month.');
    // The words were in 400 ms after the end of speech, the turn ended then: 400 + 300.
    expect(scoreItem(long, outcome(3400, 3400), 300)).toMatchObject({ decisionMs: 400, waitMs: 700 });
    // A hold that ends after the reply is ready: the hold is the wait.
    expect(scoreItem(long, outcome(5200, 3400), 300)).toMatchObject({ decisionMs: 2200, waitMs: 2200 });
    // Words late (self-hosted): they are the wait.
    expect(scoreItem(long, outcome(4600, 5000), 300)).toMatchObject({ decisionMs: 1600, waitMs: 2300 });
  });

  it('sorts answers by length and pauses by half and by the 2 s bound', () => {
    expect(lengthClass(item('s', 'Yes, I did.'))).toBe('short');
    expect(lengthClass(item('m', 'I would like a better mobile app.'))).toBe('middle');
    expect(lengthClass(item('l', 'We started with the free plan and upgraded after a month.'))).toBe('long');
    const summary = summarizePoint({
      label: 'x',
      route: 'hosted',
      items: [
        scoreItem(paused('a', 1000), outcome(1200), 300),
        scoreItem(paused('b', 1800, true), outcome(4000), 300),
        scoreItem(paused('c', 2400, true), outcome(3000), 300),
        scoreItem(item('s', 'Yes.', { kind: 'short', speech: { startMs: 100, endMs: 600 } }), outcome(2800, 1000), 300),
      ],
    });
    expect(summary.talkOvers).toEqual({ tuning: [1, 1], heldOut: [0, 1], over2s: [1, 1] });
    expect(summary.wait.short).toEqual({ p50: 2200, p90: 2200, n: 1 });
    expect(summary.cutShort).toBe(0);
  });
});
