/**
 * Whether the bot's question asks for a short answer (closed: "Did you finish the setup?") or
 * invites a longer one (open: "How did you first hear of us?"), from its text: the expected length
 * of the answer tells the endpointing policy (endpointing.ts) whether a short answer may be a
 * thinking pause. English only: a question that starts with an auxiliary or modal verb, or offers
 * a choice ("... or ..."), is closed; any other, and any question in another language, is open (the
 * patient side is the safe default). Of several sentences, the last question asked counts.
 */
export type QuestionKind = 'open' | 'closed';

const AUXILIARIES = new Set([
  'do',
  'does',
  'did',
  'is',
  'are',
  'was',
  'were',
  'am',
  'have',
  'has',
  'had',
  'can',
  'could',
  'will',
  'would',
  'shall',
  'should',
  'may',
  'might',
  'must',
  "don't",
  "doesn't",
  "didn't",
  "isn't",
  "aren't",
  "wasn't",
  "weren't",
  "haven't",
  "hasn't",
  "can't",
  "won't",
  "wouldn't",
  "couldn't",
  "shouldn't",
]);

export function questionKind(text: string, language = 'en'): QuestionKind {
  if (!language.toLowerCase().startsWith('en')) return 'open';
  const sentences = text
    .split(/(?<=[.!?])\s+/)
    .map((s) => s.trim())
    .filter(Boolean);
  const question = sentences.findLast((s) => s.endsWith('?')) ?? sentences.at(-1) ?? '';
  const words = question
    .toLowerCase()
    .replace(/’/g, "'")
    .split(/\s+/)
    .map((w) => w.replace(/[^\p{L}']/gu, ''))
    .filter(Boolean);
  if (words.length === 0) return 'open';
  if (AUXILIARIES.has(words[0]!)) return 'closed';
  return words.includes('or') ? 'closed' : 'open';
}
