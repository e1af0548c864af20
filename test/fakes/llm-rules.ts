import type { ChatMessage } from '../../worker/providers/llm.ts';
import { WAIT_REPLY } from '../../worker/bot/prompts.ts';

/**
 * Scripted decisions of the stand-in language model, chosen by the respondent's words rather than
 * by the order of the calls: a call started at a pause (preemptive, issue 21) and a call at the end
 * of the turn can come in either order, so a test scripts "answer WAIT to words that trail off"
 * and gets the same answer every run. A rule whose reply is `WAIT` applies only when the prompt
 * offers WAIT (worker/bot/prompts.ts), as a model following the contract would. These answers are
 * the script's, not a model's judgement: a bench that uses them says so.
 */
export interface LlmRule {
  /** A regular expression (source, case-insensitive) tested against the respondent's latest words. */
  words: string;
  reply: string;
}

/** The respondent's latest words in a decision prompt (its last `Respondent:` line), or ''. */
export function latestRespondentWords(messages: ChatMessage[]): string {
  const content: unknown = messages.filter((m) => m?.role === 'user').at(-1)?.content;
  const user = typeof content === 'string' ? content : '';
  const line = user
    .split('\n')
    .filter((l) => l.startsWith('Respondent: '))
    .at(-1);
  return line ? line.slice('Respondent: '.length) : '';
}

/** Whether the prompt offers WAIT (the system message states the contract). */
export function offersWait(messages: ChatMessage[]): boolean {
  return messages.some(
    (m) => m?.role === 'system' && typeof m.content === 'string' && m.content.includes(`reply with exactly ${WAIT_REPLY}`),
  );
}

/** The first matching rule's reply, or undefined (the caller's own script answers). */
export function replyByRules(messages: ChatMessage[], rules: readonly LlmRule[]): string | undefined {
  const words = latestRespondentWords(messages);
  for (const rule of rules) {
    if (rule.reply.trim().toUpperCase() === WAIT_REPLY && !offersWait(messages)) continue;
    if (new RegExp(rule.words, 'i').test(words)) return rule.reply;
  }
  return undefined;
}
