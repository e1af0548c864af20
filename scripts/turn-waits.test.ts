import { describe, expect, it } from 'vitest';
import { describeWait, turnWaits, type SpanTimes } from './turn-waits.ts';

/** The demo's breakdown of a turn's wait, from spans on one clock. */
const span = (name: string, startMs: number, endMs: number, attributes: Record<string, unknown> = {}): SpanTimes => ({
  name,
  startMs,
  endMs,
  attributes,
});

describe("where a turn's wait went", () => {
  it('splits the latency into the decision, the words, the model after the words, and the rest (the voice)', () => {
    const spans = [
      span('turn.end', 1000, 1220),
      span('stt.final', 1220, 1400),
      // A speculative call started at the pause, dropped, then the kept one: its first token 150 ms after the words.
      span('llm.turn', 1250, 1300, { 'llm.purpose': 'follow_up', 'llm.dropped': true }),
      span('llm.turn', 1300, 1900, { 'llm.purpose': 'follow_up', 'llm.time_to_first_token_ms': 250 }),
      // The second answer: the call was ready before the words.
      span('turn.end', 5000, 5200),
      span('stt.final', 5200, 5300),
      span('llm.turn', 5050, 5400, { 'llm.purpose': 'follow_up', 'llm.time_to_first_token_ms': 100 }),
    ];
    const [first, second, third] = turnWaits(spans, [900, 600, NaN]);
    expect(first).toEqual({ totalMs: 900, decisionMs: 220, wordsMs: 180, modelMs: 150, voiceMs: 350 });
    expect(second).toEqual({ totalMs: 600, decisionMs: 200, wordsMs: 100, modelMs: 0, voiceMs: 300 });
    expect(third).toBeNull();
    expect(describeWait(first!)).toMatch(/^900 ms = decision 220 \+ words 180 \+ model 150 \+ voice 350/);
  });
});
