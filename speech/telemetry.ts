import { trace, SpanStatusCode, type Span } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';

/**
 * Spans of the speech server. As in the worker, the SDK reads only the standard OTEL_* variables
 * and starts only when an exporter is configured. Names and attribute keys are constants here;
 * what a respondent said never goes into a span.
 */
export const SPAN = {
  transcribe: 'speech.transcribe',
  synthesize: 'speech.synthesize',
} as const;

export const ATTR = {
  lane: 'speech.lane',
  endpoint: 'speech.endpoint',
  audioSeconds: 'speech.audio_seconds',
  queueWaitMs: 'speech.queue_wait_ms',
  decodeMs: 'speech.decode_ms',
  realTimeFactor: 'speech.real_time_factor',
  truncated: 'speech.truncated',
  textChars: 'speech.text_chars',
} as const;

export function startSpeechTracing(env: Record<string, string | undefined>): { shutdown(): Promise<void> } {
  const wanted = Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_TRACES_EXPORTER);
  if (!wanted || env.OTEL_SDK_DISABLED === 'true') return { shutdown: async () => undefined };
  if (!env.OTEL_SERVICE_NAME) process.env.OTEL_SERVICE_NAME = 'voice-speech';
  const sdk = new NodeSDK({ instrumentations: [], metricReaders: [], logRecordProcessors: [] });
  sdk.start();
  return { shutdown: () => sdk.shutdown().catch(() => undefined) };
}

export const speechTracer = () => trace.getTracer('voice-speech');

export function failSpan(span: Span, message: string): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}
