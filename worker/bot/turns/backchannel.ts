/**
 * Whether a short utterance said over the bot is a backchannel ("mm-hm", "yeah", "okay") rather
 * than an interruption: such words show the respondent is listening, so the bot goes on. Empty text
 * (a cough, a laugh, a noise the recogniser hears as nothing) counts as a backchannel too.
 */
const BACKCHANNEL_WORDS = new Set([
  'mm',
  'mmm',
  'hmm',
  'hm',
  'mhm',
  'mm-hm',
  'mm-hmm',
  'mmhm',
  'mmhmm',
  'uh-huh',
  'uhhuh',
  'uh',
  'um',
  'ah',
  'oh',
  // The same sounds as a recogniser may write them, in two words ("Uh, huh."). "Huh" alone stays
  // out: said on its own over the interviewer it asks for the question again.
  'uh huh',
  'mm hm',
  'mm hmm',
  'm hm',
  'hm hm',
  // A hum written as the letter: the self-hosted recogniser (Moonshine) writes a short hum "M."
  // or "M. M.". No answer is the letter alone.
  'm',
  'yeah',
  'yes',
  'yep',
  'yup',
  'ok',
  'okay',
  'right',
  'sure',
  'alright',
  'i see',
  'got it',
  'cool',
  'nice',
]);

export function isBackchannel(text: string): boolean {
  const words = text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s'-]+/gu, ' ')
    .split(/\s+/)
    .filter(Boolean);
  if (words.length === 0) return true;
  if (words.length > 3) return false;
  const joined = words.join(' ');
  return BACKCHANNEL_WORDS.has(joined) || words.every((w) => BACKCHANNEL_WORDS.has(w));
}
