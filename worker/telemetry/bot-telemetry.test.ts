import { describe, expect, it } from 'vitest';
import { BotEventSchema, type BotEvent } from './bot-events.ts';
import { recordBotEvent } from './bot-telemetry.ts';
import { createMetrics } from './metrics.ts';

/** A bot's typed events become the worker's metrics here, and only here. */
describe('bot telemetry', () => {
  it('turns each measurement into its metric', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const events: BotEvent[] = [
      { type: 'provider_latency', provider: 'llm', operation: 'follow_up', seconds: 0.4 },
      { type: 'turn_end', reason: 'model' },
      { type: 'turn_end', reason: 'model' },
      { type: 'turn_latency', seconds: 0.7 },
      { type: 'interruption', kind: 'backchannel' },
      { type: 'span', span: { name: 'llm.turn', startMs: 1, endMs: 2, attributes: {} } },
    ];
    for (const event of events) recordBotEvent(BotEventSchema.parse(event) as BotEvent, { metrics, pod: 'pod-a' });
    const text = await metrics.registry.metrics();
    expect(text).toContain('worker_provider_latency_seconds_count{provider="llm",operation="follow_up"} 1');
    expect(text).toContain('worker_turn_ends_total{reason="model"} 2');
    expect(text).toContain('worker_turn_latency_seconds_count 1');
    expect(text).toContain('worker_interruptions_total{kind="backchannel"} 1');
  });

  it('refuses an event a bot should never send', () => {
    expect(BotEventSchema.safeParse({ type: 'turn_end', reason: 'bored' }).success).toBe(false);
    expect(BotEventSchema.safeParse({ type: 'provider_latency', provider: 'llm', operation: 'x', seconds: -1 }).success).toBe(false);
  });
});
