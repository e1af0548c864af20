import { describe, expect, it } from 'vitest';
import { scriptedProviders } from '../../test/fakes/scripted-providers.ts';
import { DecisionCalls, sameWords } from './decision-calls.ts';
import type { BotEvent } from '../telemetry/bot-events.ts';
import { ModelTurn } from './model-turn.ts';

/** Speculative decision calls (preemptive generation, issue 21): kept on the same words, else cancelled. */
function calls(replies: string[]) {
  const providers = scriptedProviders({ replies, llmDelayMs: 5, llmPieceMs: 1 });
  const events: BotEvent[] = [];
  const modelTurn = new ModelTurn({ llm: providers.llm, sessionId: 's1', telemetry: (e) => events.push(e), clock: Date.now });
  return { providers, events, decisions: new DecisionCalls({ modelTurn, signal: new AbortController().signal, maxTokens: 50 }) };
}

const prompt = [{ role: 'user' as const, content: 'Question: q\n\nRespondent: We tried a few tools' }];

describe('decision calls started at a pause', () => {
  it('keeps a speculation whose words match the turn\'s final words', async () => {
    const { decisions, providers } = calls(['FOLLOW_UP: Which tools?']);
    decisions.speculate('We tried a few tools', prompt, false);
    const kept = decisions.claim('we tried, a few tools.');
    expect(kept?.speculative).toBe(true);
    expect(await kept!.stream.kind).toBe('follow_up');
    expect(providers.calls.llm).toHaveLength(1);
  });

  it('drops (aborts) a speculation whose words differ, and it is never read for speech', async () => {
    const { decisions, providers, events } = calls(['FOLLOW_UP: Which tools?']);
    decisions.speculate('We tried a few tools', prompt, false);
    expect(decisions.claim('We tried a few tools and gave up')).toBeNull();
    await new Promise((r) => setTimeout(r, 50));
    expect(providers.calls.llmAborted).toBe(1);
    const span = events.find((e) => e.type === 'span');
    expect(span?.type === 'span' && span.span.attributes).toMatchObject({ 'llm.speculative': true, 'llm.dropped': true });
    expect(span?.type === 'span' && span.span.error).toBeUndefined();
    expect(decisions.claim('We tried a few tools')).toBeNull();
  });

  it('compares words without case, punctuation or spacing', () => {
    expect(sameWords('We tried... a few tools.', 'we tried a few  tools')).toBe(true);
    expect(sameWords('We tried', 'We tried a few')).toBe(false);
  });
});
