/**
 * Whether a transcript holds what the respondent said: the share of the answer's content words
 * (lower case, no punctuation, function words left out) found among the transcript's words. A
 * recogniser may spell a number or drop a comma; tests assert recall of content words (at least
 * 0.8), not exact text. The placeholder stand-in ("answer 3 (2.1 s of audio)") scores about 0.
 */
const FUNCTION_WORDS = new Set(
  (
    'a an the and or but so of to in on at for with by from as is are was were be been being it its this that these those ' +
    'i me my we our you your he she they them their his her there here do does did have has had not no yes just very ' +
    'really than then also about into out up over if what which who how when where why'
  ).split(' '),
);

export function words(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[’']/g, '')
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
}

export function contentWords(text: string): string[] {
  return words(text).filter((w) => !FUNCTION_WORDS.has(w));
}

/** Content words of `expected` found in `heard`, over all of them (1 when `expected` has none). */
export function contentRecall(expected: string, heard: string): number {
  const wanted = contentWords(expected);
  if (wanted.length === 0) return 1;
  const got = new Set(words(heard));
  return wanted.filter((w) => got.has(w)).length / wanted.length;
}

/** Recall over several answers pooled (each content word of each answer counts once). */
export function pooledRecall(pairs: Array<{ expected: string; heard: string }>): number {
  let found = 0;
  let total = 0;
  for (const { expected, heard } of pairs) {
    const wanted = contentWords(expected);
    const got = new Set(words(heard));
    total += wanted.length;
    found += wanted.filter((w) => got.has(w)).length;
  }
  return total === 0 ? 1 : found / total;
}
