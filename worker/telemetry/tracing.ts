import { context, trace, SpanStatusCode, type Attributes, type Context, type Span } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { TRACER_NAME } from './names.ts';

/**
 * OpenTelemetry set-up. The SDK reads only the standard OTEL_* variables (endpoint, protocol,
 * service name, batch delay); with no OTEL_EXPORTER_OTLP_*ENDPOINT and OTEL_TRACES_EXPORTER unset
 * we do not start it, so a worker without a collector does not log export failures forever.
 */
export interface Tracing {
  shutdown(): Promise<void>;
}

export function startTracing(env: Record<string, string | undefined>): Tracing {
  const wanted = Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_TRACES_EXPORTER);
  if (!wanted || env.OTEL_SDK_DISABLED === 'true') return { shutdown: async () => undefined };
  if (!env.OTEL_SERVICE_NAME) process.env.OTEL_SERVICE_NAME = 'voice-worker';
  // No instrumentations and no metrics/logs exporters: traces only, named by us.
  const sdk = new NodeSDK({ instrumentations: [], metricReaders: [], logRecordProcessors: [] });
  sdk.start();
  return { shutdown: () => sdk.shutdown().catch(() => undefined) };
}

export const tracer = () => trace.getTracer(TRACER_NAME);

/** A span parent given as ids, e.g. carried through Redis from the replica that answered the spawn. */
export function remoteParent(traceId: string | undefined, spanId: string | undefined): Context {
  if (!traceId || !spanId) return context.active();
  return trace.setSpanContext(context.active(), { traceId, spanId, traceFlags: 1, isRemote: true });
}

/** Records a span that was measured elsewhere (the bot process) with its own start and end. */
export function recordSpan(name: string, startMs: number, endMs: number, attributes: Attributes, parent: Context, error?: string): void {
  const span = tracer().startSpan(name, { startTime: startMs, attributes }, parent);
  if (error) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
  span.end(endMs);
}

export function failSpan(span: Span, message: string): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}
