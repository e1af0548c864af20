import { wordsUnfinished } from '../turns/unfinished-words.ts';
import type { QuestionKind } from './question-kind.ts';

/**
 * Patience by design (issue 40; docs/worker.md, "Patience by design"): at each frame of silence
 * inside a turn, whether the turn may end now. A pure function of what the bot knows at that frame
 * (the silence, the voiced time, the words so far, the question, the end-of-turn model's last
 * answer, the respondent's learned pauses) and of the endpointing settings; the turn detector asks
 * it, and a test can ask it with a clock it sets.
 *
 * - A fragment (up to `holdMaxWords` words; while the words are not in, less than
 *   `holdMaxVoicedMs` of speech) to an open question is *held*: it may end only once the silence
 *   reaches `holdMs` plus the learned extra, however finished the model says it sounds.
 * - Any other answer (longer, or to a closed question) takes the fast path: its words, once in,
 *   end it if they do not go on (reason `words`: a complete sentence of eight words or more, or any
 *   complete answer to a closed question, needs no model to say so; Smart Turn hesitates on many
 *   such answers in synthetic voices and would leave them to the longest silence), and before they
 *   are in a "finished" from the model ends it at the commit point; nothing learned is added.
 * - Words that plainly go on ("I think,", "... and") hold any answer until speech comes back or the
 *   longest silence.
 * - The longest silence (`silenceEndMs`: TURN_MAX_SILENCE_MS with the model, VAD_SILENCE_MS
 *   without) ends a turn whatever was said; a held one not before its hold is over.
 */
export interface EndpointingRules {
  /** The silence at which a pause commits its words and the model is asked. */
  commitPointMs: number;
  /** The silence that ends a turn whatever the model says (the longest pause, or the silence rule). */
  silenceEndMs: number;
  /** The model's probability at or above which it says "finished". */
  modelThreshold: number;
  /** TURN_HOLD_MS: the silence a held fragment needs before it may end (0: nothing is held). */
  holdMs: number;
  /** TURN_HOLD_MAX_WORDS: an answer of at most this many words to an open question is held. */
  holdMaxWords: number;
  /** TURN_HOLD_MAX_VOICED_MS: while the words are not in, an answer with less speech than this is held. */
  holdMaxVoicedMs: number;
  /** Complete words end a fast-path answer (with the end-of-turn model; silence detection waits its silence). */
  wordsEnd?: boolean;
}

/** What is known at one frame of silence inside a turn. */
export interface SilenceView {
  silenceMs: number;
  /** Voiced time in the turn so far. */
  speechMs: number;
  /** The turn's words so far (realtime text of the pause); null while they are not in. */
  words: string | null;
  question: QuestionKind;
  /** The end-of-turn model's latest answer about this silence; undefined: none (or no model). */
  probability: number | undefined;
  /** What the respondent's own long pauses add to the hold (pause-profile.ts). */
  learnedExtraMs: number;
  language?: string;
}

export type EndpointVerdict = { end: false; held: boolean } | { end: true; reason: 'model' | 'words' | 'silence'; held: boolean };

/** Whether this answer is a fragment to an open question, which the hold keeps open. */
export function isHeldFragment(view: Pick<SilenceView, 'speechMs' | 'words' | 'question'>, rules: EndpointingRules): boolean {
  if (rules.holdMs <= 0 || view.question !== 'open') return false;
  return view.words !== null ? wordCount(view.words) <= rules.holdMaxWords : view.speechMs < rules.holdMaxVoicedMs;
}

/** The silence at which a held answer's hold is over (0: it is not held). */
export function holdEndMs(view: SilenceView, rules: EndpointingRules): number {
  return isHeldFragment(view, rules) ? rules.holdMs + view.learnedExtraMs : 0;
}

export function endpoint(view: SilenceView, rules: EndpointingRules): EndpointVerdict {
  const holdEnd = holdEndMs(view, rules);
  const held = holdEnd > 0;
  if (finishedNow(view, rules, holdEnd)) return { end: true, reason: 'model', held };
  if (!held && wordsComplete(view, rules)) return { end: true, reason: 'words', held };
  if (view.silenceMs >= Math.max(rules.silenceEndMs, holdEnd)) return { end: true, reason: 'silence', held };
  return { end: false, held };
}

/** The model's "finished" ends the turn now: past the commit point and the hold, and the words do not go on. */
function finishedNow(view: SilenceView, rules: EndpointingRules, holdEnd: number): boolean {
  const finished = view.probability !== undefined && view.probability >= rules.modelThreshold;
  if (!finished || view.silenceMs < Math.max(rules.commitPointMs, holdEnd)) return false;
  return view.words === null || !wordsUnfinished(view.words, view.language);
}

/** A fast-path answer whose words are in at the commit point and do not go on: its end needs no model. */
function wordsComplete(view: SilenceView, rules: EndpointingRules): boolean {
  if (!rules.wordsEnd || view.words === null || view.silenceMs < rules.commitPointMs || wordCount(view.words) === 0) return false;
  return !wordsUnfinished(view.words, view.language);
}

export function wordCount(words: string): number {
  return words.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w)).length;
}
