/**
 * Whether the bot's question asks for a short answer (closed: "Did you finish the setup?") or
 * invites a longer one (open: "How did you first hear of us?"), from its text: the expected length
 * of the answer tells the endpointing policy (endpointing.ts) whether a short answer may be a
 * thinking pause. English only: a question that starts with an auxiliary or modal verb ("Did you
 * ...?"), or offers a choice between short options ("Which ..., A or B?", "Monthly or yearly?"),
 * is closed; any other, and any question in another language, is open (the patient side is the
 * safe default). A polite request is open though it starts with a modal ("Could you tell me more
 * about that?", "Can you walk me through it?"), and so is a wh-question that happens to hold "or"
 * ("What do you like or dislike about it?"). Of several sentences, the last question asked counts.
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

/** Verbs that, after "could you" or "can you please", ask for an account rather than a yes or no. */
const TELLING = new Set(['tell', 'describe', 'explain', 'walk', 'share', 'say', 'talk', 'elaborate', 'expand', 'give', 'list', 'go']);
const WH = new Set(['what', 'how', 'why', 'where', 'when', 'who', 'whom', 'whose']);

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
  if (AUXILIARIES.has(words[0]!)) return isRequest(words) ? 'open' : 'closed';
  // A choice: "Which plan do you use, monthly or yearly?", "Monthly or yearly?"; not "What do you like or dislike?".
  return words.includes('or') && !WH.has(words[0]!) ? 'closed' : 'open';
}

/** "Could you tell me ...", "Can you please describe ...", "Would you walk me through ...". */
function isRequest(words: readonly string[]): boolean {
  const rest = words[1] === 'you' ? words.slice(2).filter((w) => w !== 'please' && w !== 'maybe' && w !== 'just') : [];
  return rest.length > 0 && TELLING.has(rest[0]!);
}
