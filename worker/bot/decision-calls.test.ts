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
  const voice = {
    prepared: [] as string[],
    discarded: [] as string[],
    prepare: (t: string) => void voice.prepared.push(t),
    discard: (t: string) => void voice.discarded.push(t),
  };
  return {
    providers,
    events,
    voice,
    decisions: new DecisionCalls({ modelTurn, signal: new AbortController().signal, maxTokens: 50, voice }),
  };
}

const prompt = [{ role: 'user' as const, content: 'Question: q\n\nRespondent: We tried a few tools' }];

describe('decision calls started at a pause', () => {
  it("keeps a speculation whose words match the turn's final words", async () => {
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

  it("gives a speculation's first sentence to the voice ahead, and discards it when the speculation is dropped (issue 40)", async () => {
    const { decisions, voice } = calls(['FOLLOW_UP: Which tools? And why?', 'FOLLOW_UP: Which tools?']);
    decisions.speculate('We tried a few tools', prompt, false);
    await new Promise((r) => setTimeout(r, 50));
    expect(voice.prepared).toEqual(['Which tools?']);
    decisions.dropSpeculation();
    expect(voice.discarded).toEqual(['Which tools?']);
    // Dropped before its first sentence was written: nothing is made for it.
    decisions.speculate('We tried a few tools', prompt, false);
    decisions.dropSpeculation();
    await new Promise((r) => setTimeout(r, 50));
    expect(voice.prepared).toEqual(['Which tools?']);
  });
});
