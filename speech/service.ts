import type { Logger } from '../lib/log.ts';
import type { SpeechEngine, Transcription } from './engine.ts';
import { internalError, overloaded, SpeechError } from './errors.ts';
import { FairQueue, JobAbortedError, QueueFullError, type RunOptions } from './fair-queue.ts';
import type { Lane, SpeechMetrics } from './metrics.ts';
import { ATTR, failSpan, SPAN, speechTracer } from './telemetry.ts';

/**
 * The models behind their queues: one fair queue per lane (recogniser, voice), so that a long
 * synthesis never holds a respondent's words back and the other way round. Every call is measured
 * (decode time, real-time factor, queue wait) and spanned; a full queue becomes the 503 the
 * bot's retry policy and fallback understand; a fault of the model becomes a 500 and is logged.
 */
export interface SpeechService {
  /**
   * `client` is what the queue is fair between (the caller's address), `session` one of its
   * realtime sessions or connections; `background`: decoded ahead of a commit, after every ordinary
   * job waiting (fair-queue.ts).
   */
  transcribe(
    session: string,
    samples: Float32Array,
    options: { client: string; endpoint: string; signal?: AbortSignal; background?: boolean },
  ): Promise<Transcription>;
  /** The session now waits for its background decodes: they go ahead of other sessions' background work. */
  promote(session: string): void;
  synthesize(session: string, text: string, options: { client: string; speed: number; signal?: AbortSignal }): Promise<Float32Array>;
  /** Whether the lane would take an ordinary job of `client` now (asked before a body is read). */
  hasRoom(lane: Lane, client: string): boolean;
  readonly voiceRate: number;
}

export interface ServiceOptions {
  engine: SpeechEngine;
  metrics: SpeechMetrics;
  log: Logger;
  sttConcurrency: number;
  ttsConcurrency: number;
  queueCapacity: number;
}

const RECOGNISER_RATE = 16_000;

export function createSpeechService(options: ServiceOptions): SpeechService {
  const { engine, metrics, log } = options;
  const queues: Record<Lane, FairQueue> = {
    stt: new FairQueue({
      concurrency: options.sttConcurrency,
      capacity: options.queueCapacity,
      onDepth: (n) => metrics.queueDepth.set({ lane: 'stt' }, n),
    }),
    tts: new FairQueue({
      concurrency: options.ttsConcurrency,
      capacity: options.queueCapacity,
      onDepth: (n) => metrics.queueDepth.set({ lane: 'tts' }, n),
    }),
  };
  metrics.queueDepth.set({ lane: 'stt' }, 0);
  metrics.queueDepth.set({ lane: 'tts' }, 0);

  async function queued<T>(
    lane: Lane,
    session: string,
    spanName: string,
    attributes: Record<string, string | number>,
    run: RunOptions,
    work: () => Promise<{ value: T; audioSeconds: () => number }>,
  ): Promise<T> {
    const span = speechTracer().startSpan(spanName, { attributes: { [ATTR.lane]: lane, ...attributes } });
    const queuedAt = performance.now();
    try {
      return await queues[lane].run(
        session,
        async () => {
          const startedAt = performance.now();
          metrics.queueWaitSeconds.observe({ lane }, (startedAt - queuedAt) / 1000);
          metrics.running.inc({ lane });
          try {
            const { value, audioSeconds } = await work();
            const decode = (performance.now() - startedAt) / 1000;
            const seconds = audioSeconds();
            metrics.decodeSeconds.observe({ lane }, decode);
            if (seconds > 0) metrics.realTimeFactor.observe({ lane }, decode / seconds);
            span.setAttributes({
              [ATTR.queueWaitMs]: Math.round(startedAt - queuedAt),
              [ATTR.decodeMs]: Math.round(decode * 1000),
              [ATTR.audioSeconds]: seconds,
              ...(seconds > 0 ? { [ATTR.realTimeFactor]: decode / seconds } : {}),
            });
            return value;
          } finally {
            metrics.running.dec({ lane });
          }
        },
        run,
      );
    } catch (err) {
      if (err instanceof QueueFullError) {
        // A background decode refused is done at its commit instead; nobody was answered 503.
        if (!run.background) metrics.rejected.inc({ lane });
        failSpan(span, 'queue full');
        throw overloaded(lane === 'stt' ? 'speech-to-text' : 'text-to-speech');
      }
      if (err instanceof JobAbortedError || err instanceof SpeechError) {
        failSpan(span, err.message);
        throw err;
      }
      log.error('model call failed', { lane, err });
      failSpan(span, 'model call failed');
      throw internalError();
    } finally {
      span.end();
    }
  }

  return {
    voiceRate: engine.voiceRate,
    transcribe(session, samples, { client, endpoint, signal, background = false }) {
      const seconds = samples.length / RECOGNISER_RATE;
      return queued('stt', session, SPAN.transcribe, { [ATTR.endpoint]: endpoint }, { client, signal, background }, async () => {
        const result = await engine.transcribe(samples);
        if (result.truncated) metrics.truncated.inc();
        return { value: result, audioSeconds: () => seconds };
      });
    },
    promote(session) {
      queues.stt.promote(session);
    },
    hasRoom(lane, client) {
      return queues[lane].hasRoom(client);
    },
    synthesize(session, text, { client, speed, signal }) {
      return queued('tts', session, SPAN.synthesize, { [ATTR.textChars]: text.length }, { client, signal }, async () => {
        const samples = await engine.synthesize(text, speed);
        return { value: samples, audioSeconds: () => samples.length / engine.voiceRate };
      });
    },
  };
}
