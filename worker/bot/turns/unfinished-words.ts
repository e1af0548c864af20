/**
 * Whether a transcript so far clearly goes on: it ends with a comma, a dash or an ellipsis (how
 * transcription models write a voice that has not come down), or with a word that cannot end an
 * English sentence (a conjunction, an article, a preposition, a filler: "and", "the", "to", "um").
 * The end-of-turn model hears how a turn sounds; this is the words' side, used to keep a turn open
 * when the model says "finished" but the sentence plainly is not. Words only in English; in other
 * languages only the punctuation counts.
 */
const TRAILING = /(,|;|:|-|–|—|\.\.\.|…)$/;
const OPEN_ENDED_WORDS = new Set([
  'and',
  'but',
  'or',
  'so',
  'because',
  'cause',
  'if',
  'then',
  'that',
  'which',
  'who',
  'when',
  'where',
  'while',
  'although',
  'though',
  'the',
  'a',
  'an',
  'my',
  'our',
  'your',
  'their',
  'his',
  'her',
  'its',
  'this',
  'these',
  'those',
  'to',
  'of',
  'in',
  'on',
  'at',
  'for',
  'with',
  'from',
  'about',
  'into',
  'by',
  'like',
  'um',
  'uh',
  'erm',
  'er',
  'hmm',
  'i',
  "i'm",
  'is',
  'was',
  'were',
  'are',
  'am',
  'be',
  'been',
  'very',
  'really',
  'more',
  'most',
]);

export function wordsUnfinished(text: string, language = 'en'): boolean {
  const trimmed = text.trim();
  if (trimmed === '') return false;
  if (TRAILING.test(trimmed)) return true;
  if (!language.toLowerCase().startsWith('en')) return false;
  if (/[.!?]["'”’)]*$/.test(trimmed)) return false;
  const last = trimmed
    .toLowerCase()
    .split(/\s+/)
    .at(-1)!
    .replace(/[^\p{L}'’]/gu, '')
    .replace('’', "'");
  return OPEN_ENDED_WORDS.has(last);
}
