import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDecisionPrompt } from '../../worker/bot/prompts.ts';
import type { InterviewDefinition } from '../../worker/bot/messages.ts';
import { startFakeOpenAI, type FakeOpenAI } from './openai-compatible.ts';

/**
 * The stand-in model's scripted WAIT (issue 21), over its real HTTP API: a rule answers by the
 * respondent's latest words, and a WAIT rule only when the prompt offers WAIT, as the contract says.
 */
const INTERVIEW: InterviewDefinition = {
  title: 'T',
  language: 'en',
  intro: 'Hi.',
  questions: [{ id: 'q1', text: 'Which tools did you try?', maxFollowUps: 1 }],
  closing: 'Bye.',
};
const turns = (text: string) => [{ speaker: 'respondent' as const, text, questionId: 'q1', at: new Date(0).toISOString() }];

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI({ llmRules: [{ words: '(\\.\\.\\.|\\band)$', reply: 'WAIT' }] });
});
afterAll(async () => {
  await fake.close();
});

async function reply(messages: unknown): Promise<string> {
  const res = await fetch(`${fake.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages }),
  });
  const body = (await res.json()) as { choices: Array<{ message: { content: string } }> };
  return body.choices[0]!.message.content;
}

describe("the stand-in model's WAIT", () => {
  it('answers WAIT to words that trail off when WAIT is offered, and follows its script otherwise', async () => {
    const q = INTERVIEW.questions[0]!;
    expect(await reply(buildDecisionPrompt(INTERVIEW, q, turns('We tried...'), 0, { wait: { silenceMs: 300 } }))).toBe('WAIT');
    expect(await reply(buildDecisionPrompt(INTERVIEW, q, turns('My manager and'), 0, { wait: { silenceMs: 300 } }))).toBe('WAIT');
    fake.scriptLlm('NEXT', 'NEXT');
    // Not offered: the rule is skipped and the script answers.
    expect(await reply(buildDecisionPrompt(INTERVIEW, q, turns('We tried...'), 0))).toBe('NEXT');
    // Finished words: the script answers.
    expect(await reply(buildDecisionPrompt(INTERVIEW, q, turns('We tried a few tools.'), 0, { wait: { silenceMs: 300 } }))).toBe('NEXT');
    fake.scriptLlmRules({ words: 'tools\\.$', reply: 'FOLLOW_UP: Which one stayed?' });
    expect(await reply(buildDecisionPrompt(INTERVIEW, q, turns('We tried a few tools.'), 0, { wait: { silenceMs: 300 } }))).toBe(
      'FOLLOW_UP: Which one stayed?',
    );
  });

  it('ignores messages it cannot read (no words, no rule)', async () => {
    fake.scriptLlm('NEXT');
    expect(await reply([{ role: 'user', content: [{ type: 'text', text: 'Respondent: and' }] }])).toBe('NEXT');
  });
});
