import { describe, expect, it } from 'vitest';
import { isBackchannel } from './backchannel.ts';
import { wordsUnfinished } from './unfinished-words.ts';

/** How the bot reads the respondent's words: a backchannel, or words that plainly go on. */
describe('backchannels', () => {
  it('are short listening noises or nothing, not answers', () => {
    for (const text of ['Mm-hm.', 'uh-huh', 'Yeah.', 'okay, okay', '', 'Right.', 'M.', 'M. M..'])
      expect(isBackchannel(text), text).toBe(true);
    for (const text of ['Yes, I think so', 'No.', 'The onboarding, mostly.', 'wait a second', 'M. H. M..', 'Emma.'])
      expect(isBackchannel(text), text).toBe(false);
  });

  it('are heard when the recogniser writes them in two words, and "huh" alone is still a question', () => {
    for (const text of ['Uh, huh.', 'uh huh', 'Mm, hmm.', 'Mm hm']) expect(isBackchannel(text), text).toBe(true);
    for (const text of ['Huh?', 'huh, what']) expect(isBackchannel(text), text).toBe(false);
  });
});

describe('words that plainly go on', () => {
  it('a trailing comma, dash or ellipsis, or a last word that cannot end a sentence', () => {
    for (const text of ['I think,', 'What I liked was,', 'Well, the thing is...', 'It was good and', 'Mostly the', 'I went to', 'Um'])
      expect(wordsUnfinished(text), text).toBe(true);
    for (const text of ['I liked the onboarding a lot.', 'Yes', 'The price was too high', 'Mostly the onboarding.', 'Is it?', ''])
      expect(wordsUnfinished(text), text).toBe(false);
  });

  it('in other languages only the punctuation counts', () => {
    expect(wordsUnfinished('Je pense que,', 'fr')).toBe(true);
    expect(wordsUnfinished('Je pense que le', 'fr')).toBe(false);
  });
});
