import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The speech server's Prometheus metrics (docs/speech.md, "Metrics"), on the management port.
 * `lane` is `stt` (recogniser) or `tts` (voice). The real-time factor is decode time over audio
 * time: below 1 the server keeps up with speech.
 */
export type Lane = 'stt' | 'tts';

export interface SpeechMetrics {
  registry: Registry;
  queueDepth: Gauge<'lane'>;
  running: Gauge<'lane'>;
  decodeSeconds: Histogram<'lane'>;
  realTimeFactor: Histogram<'lane'>;
  queueWaitSeconds: Histogram<'lane'>;
  requests: Counter<'endpoint' | 'outcome'>;
  rejected: Counter<'lane'>;
  truncated: Counter;
  sessions: Gauge;
  pieces: Counter<'stage'>;
  earlyTails: Counter<'outcome'>;
}

export function createSpeechMetrics(): SpeechMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
    queueDepth: new Gauge({ name: 'speech_queue_depth', help: 'Jobs waiting for a model, per lane.', labelNames: ['lane'], registers }),
    running: new Gauge({ name: 'speech_jobs_running', help: 'Jobs a model is working on, per lane.', labelNames: ['lane'], registers }),
    decodeSeconds: new Histogram({
      name: 'speech_decode_seconds',
      help: 'Time one model call took (a recognition or one synthesised sentence).',
      labelNames: ['lane'],
      buckets: [0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1, 1.5, 2, 3, 5, 8, 13],
      registers,
    }),
    realTimeFactor: new Histogram({
      name: 'speech_real_time_factor',
      help: 'Decode time divided by the audio duration it covers.',
      labelNames: ['lane'],
      buckets: [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 1.5, 2, 4],
      registers,
    }),
    queueWaitSeconds: new Histogram({
      name: 'speech_queue_wait_seconds',
      help: 'Time a job waited in the queue before a model took it.',
      labelNames: ['lane'],
      buckets: [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 5, 10],
      registers,
    }),
    requests: new Counter({
      name: 'speech_requests_total',
      help: 'Requests and realtime commits by endpoint and outcome.',
      labelNames: ['endpoint', 'outcome'],
      registers,
    }),
    rejected: new Counter({
      name: 'speech_rejected_total',
      help: 'Jobs refused because the lane queue was full (answered 503).',
      labelNames: ['lane'],
      registers,
    }),
    truncated: new Counter({
      name: 'speech_decode_truncated_total',
      help: 'Recognitions cut to the length the audio can hold (the decoder repeated itself).',
      registers,
    }),
    sessions: new Gauge({ name: 'speech_realtime_sessions', help: 'Open realtime transcription sessions.', registers }),
    pieces: new Counter({
      name: 'speech_realtime_pieces_total',
      help: 'Pieces of realtime buffers decoded, by whether the decode finished before the commit (cut at a pause and decoded ahead) or after it.',
      labelNames: ['stage'],
      registers,
    }),
    earlyTails: new Counter({
      name: 'speech_realtime_early_tails_total',
      help:
        'Realtime buffers decoded early, at the first quiet after speech (SPEECH_EARLY_TAIL_MS), by outcome: used ' +
        '(no speech came after it: it was the piece or the tail) or dropped (speech came back, or the buffer was ' +
        'cleared).',
      labelNames: ['outcome'],
      registers,
    }),
  };
}
