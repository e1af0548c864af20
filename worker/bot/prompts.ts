import type { ChatMessage } from '../providers/llm.ts';
import type { InterviewDefinition, InterviewQuestion } from './messages.ts';
import { WAIT_REPLY } from './reply/decision-stream.ts';

/**
 * What the bot asks the language model, and how it reads the answer. The decision protocol is
 * plain text so any chat model can follow it: `NEXT`, or `FOLLOW_UP: <question>`, and, when the
 * prompt offers it, `WAIT`: the respondent has not finished (they stopped mid-sentence, "We
 * tried... a few"), and the interviewer keeps listening (docs/worker.md, "Turn-taking").
 */
export interface Turn {
  speaker: 'bot' | 'respondent';
  text: string;
  questionId?: string;
  at: string;
}

export type Decision = { kind: 'next' } | { kind: 'follow_up'; text: string } | { kind: 'wait' };

/** The whole reply that means "not finished, keep listening": the reply side owns its words (reply/decision-stream.ts). */
export { WAIT_REPLY };

export interface DecisionPromptOptions {
  /** Offer WAIT, saying how long the respondent has been silent since their last word. */
  wait?: { silenceMs: number };
}

export function buildDecisionPrompt(
  interview: InterviewDefinition,
  question: InterviewQuestion,
  turns: Turn[],
  followUpsSoFar: number,
  options: DecisionPromptOptions = {},
): ChatMessage[] {
  const exchange = turns
    .filter((t) => t.questionId === question.id)
    .map((t) => `${t.speaker === 'bot' ? 'Interviewer' : 'Respondent'}: ${t.text}`)
    .join('\n');
  return [
    {
      role: 'system',
      content:
        `You are a friendly voice interviewer running the interview "${interview.title}" in language "${interview.language}". ` +
        `Decide whether the respondent's latest answer needs one short follow-up question. ` +
        `You have used ${followUpsSoFar} of ${question.maxFollowUps} follow-ups for this question. ` +
        (options.wait
          ? `The respondent has been silent for ${(options.wait.silenceMs / 1000).toFixed(1)} s since their last word. ` +
            `If their latest answer has plainly not finished (it stops mid-sentence or trails off, as in "We tried..." or "and so..."), ` +
            `reply with exactly ${WAIT_REPLY} and the interviewer keeps listening. ` +
            `Otherwise reply with exactly NEXT to move on, or with FOLLOW_UP: followed by one short spoken question. Nothing else.`
          : 'Reply with exactly NEXT to move on, or with FOLLOW_UP: followed by one short spoken question. Nothing else.'),
    },
    { role: 'user', content: `Question: ${question.text}\n\n${exchange}` },
  ];
}

export function parseDecision(reply: string, waitOffered = false): Decision {
  if (waitOffered && new RegExp(`^\\s*${WAIT_REPLY}\\W*$`, 'i').test(reply)) return { kind: 'wait' };
  const match = /^\s*FOLLOW_UP\s*:\s*([\s\S]+)$/i.exec(reply);
  const text = match?.[1]?.trim();
  return text ? { kind: 'follow_up', text } : { kind: 'next' };
}

export function buildSummaryPrompt(interview: InterviewDefinition, turns: Turn[]): ChatMessage[] {
  const transcript = turns.map((t) => `${t.speaker === 'bot' ? 'Interviewer' : 'Respondent'}: ${t.text}`).join('\n');
  return [
    {
      role: 'system',
      content:
        `Summarise this voice interview ("${interview.title}") in three to five sentences for the team that ran it. ` +
        `Report what the respondent said; do not invent anything.`,
    },
    { role: 'user', content: transcript },
  ];
}
