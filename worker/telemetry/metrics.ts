import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The worker's Prometheus metrics, on its own registry (tests build several in one process).
 * Names follow the Prometheus conventions: base units, `_total` for counters.
 */
export interface WorkerMetrics {
  registry: Registry;
  spawnDuration: Histogram<'outcome'>;
  spawns: Counter<'outcome'>;
  activeSessions: Gauge;
  idleSlots: Gauge;
  providerLatency: Histogram<'provider' | 'operation'>;
  sessionOutcomes: Counter<'status' | 'reason'>;
  reports: Counter<'result'>;
  botRestarts: Counter<'reason'>;
  turnEnds: Counter<'reason'>;
  turnLatency: Histogram;
  interruptions: Counter<'kind'>;
  outcomeBacklog: Gauge;
}

export function createMetrics(options: { defaultMetrics?: boolean } = {}): WorkerMetrics {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'worker_' });
  return {
    registry,
    spawnDuration: new Histogram({
      name: 'worker_spawn_duration_seconds',
      help: 'Time to answer POST / (the session.start span), by outcome.',
      labelNames: ['outcome'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 1, 2.5],
      registers: [registry],
    }),
    spawns: new Counter({
      name: 'worker_spawns_total',
      help: 'Spawn requests by outcome.',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    activeSessions: new Gauge({ name: 'worker_active_sessions', help: 'Sessions running on this pod.', registers: [registry] }),
    idleSlots: new Gauge({
      name: 'worker_idle_slots',
      help: 'Warm bot slots of this pod that are idle and in the pool.',
      registers: [registry],
    }),
    providerLatency: new Histogram({
      name: 'worker_provider_latency_seconds',
      help: 'Model provider latency: stt request, llm round trip, tts first byte.',
      labelNames: ['provider', 'operation'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32],
      registers: [registry],
    }),
    sessionOutcomes: new Counter({
      name: 'worker_session_outcomes_total',
      help: 'Finished sessions by status and reason.',
      labelNames: ['status', 'reason'],
      registers: [registry],
    }),
    reports: new Counter({
      name: 'worker_outcome_reports_total',
      help: 'Outcome report deliveries by result: ok, refused (a 4xx, never retried), expired (deadline passed), failed (no durable copy and retries spent).',
      labelNames: ['result'],
      registers: [registry],
    }),
    outcomeBacklog: new Gauge({
      name: 'worker_outcome_backlog',
      help: 'Outcome reports kept in the shared Redis outbox, not yet acknowledged by the service (all replicas of this prefix).',
      registers: [registry],
    }),
    botRestarts: new Counter({
      name: 'worker_bot_restarts_total',
      help: 'Bot processes started again, by reason.',
      labelNames: ['reason'],
      registers: [registry],
    }),
    turnEnds: new Counter({
      name: 'worker_turn_ends_total',
      help:
        'Respondent turns ended, by what ended them: model (the end-of-turn model), words (the complete words of a long answer), ' +
        'silence, max (the utterance bound).',
      labelNames: ['reason'],
      registers: [registry],
    }),
    turnLatency: new Histogram({
      name: 'worker_turn_latency_seconds',
      help: "From the end of the respondent's speech to the bot's first audio of its reply.",
      buckets: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1, 1.5, 2, 3, 5],
      registers: [registry],
    }),
    interruptions: new Counter({
      name: 'worker_interruptions_total',
      help: 'Respondent speech over the bot: barge_in (the bot stopped), backchannel (it went on after a short "mm-hm").',
      labelNames: ['kind'],
      registers: [registry],
    }),
  };
}
