import { describe, expect, it } from 'vitest';
import { endpoint, isHeldFragment, wordCount, type EndpointingRules, type SilenceView } from './endpointing.ts';

/**
 * The endpointing policy (issue 40, step 2) on its own: whether a turn may end at one frame of
 * silence, from what is known then. The defaults of the turn policy: commit point 200 ms, longest
 * silence 1600 ms, hold 2200 ms for fragments of up to 7 words (2.5 s of speech while the words are
 * not in). The model's "finished" is 0.9 throughout unless said: the policy must hold a fragment
 * however finished it sounds, with no WAIT from any language model.
 */
const RULES: EndpointingRules = {
  commitPointMs: 200,
  silenceEndMs: 1600,
  modelThreshold: 0.5,
  holdMs: 2200,
  holdMaxWords: 7,
  holdMaxVoicedMs: 2500,
};

const view = (v: Partial<SilenceView>): SilenceView => ({
  silenceMs: 200,
  speechMs: 1200,
  words: 'We tried a few tools.',
  question: 'open',
  probability: 0.9,
  learnedExtraMs: 0,
  ...v,
});

describe('the endpointing policy', () => {
  it('holds a finished-sounding fragment to an open question until the hold, and ends it then', () => {
    for (const silenceMs of [200, 800, 1500, 2000, 2180])
      expect(endpoint(view({ silenceMs }), RULES), `${silenceMs} ms`).toEqual({ end: false, held: true });
    expect(endpoint(view({ silenceMs: 2200 }), RULES)).toEqual({ end: true, reason: 'model', held: true });
    // Not finished by the model: past the longest silence it still waits out the hold, then ends.
    expect(endpoint(view({ silenceMs: 1700, probability: 0.1 }), RULES)).toEqual({ end: false, held: true });
    expect(endpoint(view({ silenceMs: 2200, probability: 0.1 }), RULES)).toEqual({ end: true, reason: 'silence', held: true });
  });

  it('ends an answer of 8 words or more at the commit point, on a "finished"', () => {
    const words = 'We tried a few tools before we chose yours.';
    expect(wordCount(words)).toBe(9);
    expect(endpoint(view({ words, silenceMs: 180 }), RULES)).toEqual({ end: false, held: false });
    expect(endpoint(view({ words }), RULES)).toEqual({ end: true, reason: 'model', held: false });
    expect(endpoint(view({ words, probability: 0.2 }), RULES)).toEqual({ end: false, held: false });
    expect(endpoint(view({ words, silenceMs: 1600, probability: 0.2 }), RULES)).toEqual({ end: true, reason: 'silence', held: false });
  });

  it('ends a fast-path answer on its complete words, whatever the model says (issue 40)', () => {
    const words = 'We tried a few tools before we chose yours.';
    const rules = { ...RULES, wordsEnd: true };
    expect(endpoint(view({ words, probability: 0.1 }), rules)).toEqual({ end: true, reason: 'words', held: false });
    expect(endpoint(view({ words, probability: undefined }), rules)).toEqual({ end: true, reason: 'words', held: false });
    expect(endpoint(view({ words, probability: 0.1, silenceMs: 150 }), rules)).toEqual({ end: false, held: false });
    expect(endpoint(view({ words: 'Yes.', question: 'closed', probability: 0.1 }), rules)).toMatchObject({ end: true, reason: 'words' });
    // Words that go on, and a held fragment, are not ended by their words.
    expect(endpoint(view({ words: 'We tried a few tools before we chose yours, and', probability: 0.1 }), rules).end).toBe(false);
    expect(endpoint(view({ words: 'We tried a few tools.', probability: 0.1, silenceMs: 1000 }), rules)).toEqual({
      end: false,
      held: true,
    });
  });

  it('ends any answer to a closed question at the commit point, "Yes." included', () => {
    expect(endpoint(view({ words: 'Yes.', speechMs: 300, question: 'closed' }), RULES)).toEqual({
      end: true,
      reason: 'model',
      held: false,
    });
  });

  it('lengthens the hold by the learned patience, and never the fast path', () => {
    expect(endpoint(view({ silenceMs: 2400, learnedExtraMs: 500 }), RULES).end).toBe(false);
    expect(endpoint(view({ silenceMs: 2700, learnedExtraMs: 500 }), RULES).end).toBe(true);
    expect(endpoint(view({ words: 'It was a long story, but in the end it worked.', learnedExtraMs: 500 }), RULES)).toEqual({
      end: true,
      reason: 'model',
      held: false,
    });
    expect(endpoint(view({ question: 'closed', learnedExtraMs: 500 }), RULES)).toEqual({ end: true, reason: 'model', held: false });
  });

  it('lets the voiced time stand in for the words while they are not in', () => {
    expect(isHeldFragment({ words: null, speechMs: 1800, question: 'open' }, RULES)).toBe(true);
    expect(isHeldFragment({ words: null, speechMs: 2500, question: 'open' }, RULES)).toBe(false);
    expect(endpoint(view({ words: null, speechMs: 3200 }), RULES)).toEqual({ end: true, reason: 'model', held: false });
    // Once the words are in, they decide: 3.2 s of slow speech in five words is a fragment.
    expect(endpoint(view({ words: 'Well. We tried. Tools.', speechMs: 3200 }), RULES)).toEqual({ end: false, held: true });
  });

  it('keeps the words\' check: an answer whose words plainly go on does not end on a "finished"', () => {
    const words = 'We tried a few tools before we chose yours and';
    expect(endpoint(view({ words }), RULES)).toEqual({ end: false, held: false });
    expect(endpoint(view({ words, silenceMs: 1600 }), RULES)).toEqual({ end: true, reason: 'silence', held: false });
    // A fragment that goes on: past the longest silence it waits out the hold, then the silence ends it.
    expect(endpoint(view({ words: 'I think,', silenceMs: 2100 }), RULES)).toEqual({ end: false, held: true });
    expect(endpoint(view({ words: 'I think,', silenceMs: 2200 }), RULES)).toEqual({ end: true, reason: 'silence', held: true });
  });

  it('holds nothing with TURN_HOLD_MS=0 (the rule before issue 40, learned patience aside)', () => {
    const off = { ...RULES, holdMs: 0 };
    expect(endpoint(view({}), off)).toEqual({ end: true, reason: 'model', held: false });
    expect(endpoint(view({ probability: undefined, silenceMs: 1600 }), off)).toEqual({ end: true, reason: 'silence', held: false });
  });
});
