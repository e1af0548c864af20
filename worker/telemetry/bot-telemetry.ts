import type { BotEvent } from './bot-events.ts';
import type { WorkerMetrics } from './metrics.ts';
import { ATTR_POD, ATTR_SLOT_ID } from './names.ts';
import { recordSpan, remoteParent } from './tracing.ts';

/**
 * The one place where a bot's events become the worker's telemetry: spans are exported under the
 * session's trace (its parent came through Redis from the replica that answered the spawn), and
 * measurements become the Prometheus metrics. The session lifecycle code only passes events here.
 */
export interface BotEventContext {
  metrics: WorkerMetrics;
  pod: string;
  /** The session the event is about, when this pod runs it: its slot and the trace to join. */
  session?: { slot: string; traceId?: string; spanId?: string } | undefined;
}

export function recordBotEvent(event: BotEvent, context: BotEventContext): void {
  const { metrics, session } = context;
  switch (event.type) {
    case 'span': {
      const { span } = event;
      const attributes = { ...span.attributes, [ATTR_POD]: context.pod, [ATTR_SLOT_ID]: session?.slot ?? '' };
      recordSpan(span.name, span.startMs, span.endMs, attributes, remoteParent(session?.traceId, session?.spanId), span.error);
      return;
    }
    case 'provider_latency':
      metrics.providerLatency.observe({ provider: event.provider, operation: event.operation }, event.seconds);
      return;
    case 'turn_end':
      metrics.turnEnds.inc({ reason: event.reason });
      return;
    case 'turn_latency':
      metrics.turnLatency.observe(event.seconds);
      return;
    case 'interruption':
      metrics.interruptions.inc({ kind: event.kind });
      return;
  }
}
