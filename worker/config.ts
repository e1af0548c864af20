import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DAILY_SESSIONS_PER_BOT } from '../lib/daily-sessions.ts';
import { boolVar, ConfigError, intVar, optionalString, requiredString, requiredUrl, urlVar, type Env } from '../lib/env.ts';
import { readListenLimits, type ListenLimits } from '../lib/listen-limits.ts';
import { redisSettings, type RedisSettings } from './redis-connection.ts';
import { readRoomChoice, type RoomChoice } from './rooms/registry.ts';

export { ConfigError };
/** The transports ROOM_PROVIDER may name: worker/rooms/registry.ts keeps the list. */
export { ROOM_PROVIDERS, type RoomProviderName } from './rooms/registry.ts';

/**
 * The worker's configuration: read once from the environment, validated, frozen.
 * `loadConfig(env)` is pure; main.ts turns a ConfigError into one clear line and exit code 1.
 * Every variable and its default is documented in docs/worker.md. The room transport's variables
 * are read by the transport itself (worker/rooms/<name>/settings.ts, through rooms/registry.ts).
 */

export interface ProviderEndpoint {
  baseURL: string;
  apiKey: string;
  model: string;
}

export type WorkerConfig = WorkerBaseConfig & RoomChoice;

export interface WorkerBaseConfig {
  port: number;
  /** The management port: /metrics, /healthz, /readyz over plain HTTP (contract C2). */
  metricsPort: number;
  host: string;
  podName: string;
  publicUrl: string;
  tls: { certFile: string; keyFile: string } | null;
  workerToken: string;
  /** The session store: REDIS_URL, or Sentinel, with ACL user, password and TLS (redis-connection.ts). */
  redis: RedisSettings;
  redisKeyPrefix: string;
  warmPoolSize: number;
  /** Sessions one bot process runs at once, sharing its runtime and models: a crash of it ends that many (docs/worker.md, "Density"). */
  botSessionsPerProcess: number;
  /** The turn models run in worker threads of the bot process, not on its main thread (TURN_MODEL_THREAD, off by default: docs/worker.md "Density"). */
  turnModelThread: boolean;
  heartbeatIntervalMs: number;
  heartbeatTtlMs: number;
  spawnBudgetMs: number;
  retryAfterSeconds: number;
  spawnBodyLimitBytes: number;
  /** The public port's bounds (docs/worker.md, "Connection limits"). */
  publicLimits: ListenLimits;
  /** The management port's bounds (METRICS_*: the same, with a small cap). */
  managementLimits: ListenLimits;
  sessionRecordTtlSeconds: number;
  drainGraceSeconds: number;
  backendUrl: string;
  reportTimeoutMs: number;
  reportAttempts: number;
  /** How long an unacknowledged outcome report is kept and retried (contract C5). */
  outcomeReportDeadlineSeconds: number;
  /** The cap of the outbox's retry backoff. */
  outcomeRetryMaxSeconds: number;
  /** How often each replica looks for due reports in the shared outbox. */
  outcomeOutboxPollMs: number;
  llm: ProviderEndpoint;
  stt: ProviderEndpoint;
  tts: ProviderEndpoint & { voice: string };
  providerTimeoutMs: number;
  providerRetries: number;
  /** How long an idle provider connection is kept open; 0: Node's fetch (4 s). */
  providerKeepAliveMs: number;
  /** Open the provider connections when the respondent starts speaking. */
  providerWarm: boolean;
  transcriptStore: string;
  s3: { endpoint: string | null; region: string; forcePathStyle: boolean };
  maxSessionSeconds: number;
  idleTimeoutSeconds: number;
  joinTimeoutSeconds: number;
  vad: { thresholdDbfs: number; silenceMs: number; minSpeechMs: number; maxUtteranceSeconds: number };
  /** Turn-taking (docs/worker.md, "Turn-taking"). Today's pipeline: energy, silence, batch, no barge-in. */
  turns: TurnSettings;
}

export const VAD_ENGINES = ['silero', 'energy'] as const;
export const TURN_DETECTIONS = ['model', 'silence'] as const;
export const STT_MODES = ['realtime', 'batch'] as const;
export const BARGE_IN_MODES = ['pause', 'stop'] as const;

export interface TurnSettings {
  /** `silero`: Silero VAD (ONNX); `energy`: the level threshold of VAD_THRESHOLD_DBFS. */
  vadEngine: (typeof VAD_ENGINES)[number];
  /** Silero's speech probability above which a frame is speech. */
  vadSpeechThreshold: number;
  /** `model`: short silence, then the end-of-turn model decides; `silence`: VAD_SILENCE_MS of silence. */
  detection: (typeof TURN_DETECTIONS)[number];
  /** Silence after which the end-of-turn model is asked. */
  modelSilenceMs: number;
  /** The model's probability at or above which the turn has ended. */
  modelThreshold: number;
  /** The longest pause inside a turn: the turn ends after this much silence whatever the model says. */
  maxSilenceMs: number;
  /** Ask the end-of-turn model this long before the commit point, so its answer is ready at it; 0: at it. */
  modelEarlyMs: number;
  /** Ask it again every this much more silence while it says "not finished"; 0: once per pause. */
  modelReaskMs: number;
  /** Where silero_vad.onnx and the Smart Turn model are; null: the default cache (worker/bot/turns/models.ts). */
  modelsDir: string | null;
  /** `realtime`: transcribe while the respondent speaks (WebSocket); `batch`: upload each finished turn. */
  sttMode: (typeof STT_MODES)[number];
  /** The transcription model of the realtime session. */
  sttRealtimeModel: string;
  /** Respondent speech while the bot speaks stops the bot. */
  bargeIn: boolean;
  /** Speech in a started turn that counts as a barge-in (pauses the bot, or stops it in stop mode). */
  bargeInMinSpeechMs: number;
  /** BARGE_IN_MODE=pause: voiced time over the bot after which its voice pauses, before a turn starts (0: at the barge-in). */
  bargeInPauseMs: number;
  /** Speech this long is an interruption whatever its words; shorter speech that is only a backchannel lets the bot go on. */
  bargeInConfirmMs: number;
  /** `pause`: speech over the bot pauses it until judged (a backchannel resumes where it paused); `stop`: it stops at once. */
  bargeInMode: (typeof BARGE_IN_MODES)[number];
  /** A ? ! or … at the end of a streamed follow-up so far sends its sentence to speech at once. */
  replyEagerEnd: boolean;
  /** A streamed follow-up's first clause of at least this many words is spoken alone; 0: off. */
  replyFirstClauseWords: number;
  /** The language model may answer WAIT (not finished) until the silence after the last word reaches this; 0: never offered. */
  llmWaitMaxMs: number;
  /** After a WAIT, the model decides again each time the silence has grown by this much (up to llmWaitMaxMs). */
  llmWaitStepMs: number;
  /** Start the decision call on the words of a pause, before the turn has ended; keep its reply if the final words match. */
  llmPreemptive: boolean;
  /** The most a respondent's own long pauses can add to the silence before their turn may end; 0: no learning. */
  pauseLearningMaxMs: number;
  /** How long the end-of-turn model's "finished" waits for the pause's words before it stands on its own. */
  wordsWaitMs: number;
}

function oneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const raw = optionalString(env, name) ?? fallback;
  if (!(values as readonly string[]).includes(raw)) throw new ConfigError(name, `must be one of ${values.map((v) => `"${v}"`).join(', ')}, got "${raw}"`);
  return raw as T;
}

function fraction(env: Env, name: string, fallback: number): number {
  const raw = optionalString(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d*\.?\d+$/.test(raw) || !(value > 0 && value < 1)) throw new ConfigError(name, `must be a number between 0 and 1 (exclusive), got "${raw}"`);
  return value;
}

function turnSettings(env: Env, sttModel: string): TurnSettings {
  const modelSilenceMs = intVar(env, 'TURN_MODEL_SILENCE_MS', { default: 200, min: 60, max: 5000 });
  const maxSilenceMs = intVar(env, 'TURN_MAX_SILENCE_MS', { default: 1600, min: 200, max: 10_000 });
  if (maxSilenceMs < modelSilenceMs) throw new ConfigError('TURN_MAX_SILENCE_MS', `must be at least TURN_MODEL_SILENCE_MS (${modelSilenceMs})`);
  const bargeInMinSpeechMs = intVar(env, 'BARGE_IN_MIN_SPEECH_MS', { default: 120, min: 40, max: 5000 });
  const bargeInConfirmMs = intVar(env, 'BARGE_IN_CONFIRM_MS', { default: 700, min: 40, max: 10_000 });
  if (bargeInConfirmMs < bargeInMinSpeechMs) throw new ConfigError('BARGE_IN_CONFIRM_MS', `must be at least BARGE_IN_MIN_SPEECH_MS (${bargeInMinSpeechMs})`);
  return {
    vadEngine: oneOf(env, 'VAD_ENGINE', VAD_ENGINES, 'silero'),
    vadSpeechThreshold: fraction(env, 'VAD_SPEECH_THRESHOLD', 0.5),
    detection: oneOf(env, 'TURN_DETECTION', TURN_DETECTIONS, 'model'),
    modelSilenceMs,
    modelThreshold: fraction(env, 'TURN_MODEL_THRESHOLD', 0.5),
    maxSilenceMs,
    modelEarlyMs: intVar(env, 'TURN_MODEL_EARLY_MS', { default: 100, min: 0, max: modelSilenceMs }),
    modelReaskMs: intVar(env, 'TURN_MODEL_REASK_MS', { default: 400, min: 0, max: 10_000 }),
    modelsDir: optionalString(env, 'TURN_MODELS_DIR') ?? null,
    sttMode: oneOf(env, 'STT_MODE', STT_MODES, 'realtime'),
    sttRealtimeModel: optionalString(env, 'STT_REALTIME_MODEL') ?? (sttModel === 'whisper-1' ? 'gpt-4o-mini-transcribe' : sttModel),
    bargeIn: boolVar(env, 'BARGE_IN', { default: true }),
    bargeInMinSpeechMs,
    bargeInPauseMs: intVar(env, 'BARGE_IN_PAUSE_MS', { default: 64, min: 0, max: 5000 }),
    bargeInConfirmMs,
    bargeInMode: oneOf(env, 'BARGE_IN_MODE', BARGE_IN_MODES, 'pause'),
    replyEagerEnd: boolVar(env, 'REPLY_EAGER_END', { default: true }),
    replyFirstClauseWords: intVar(env, 'REPLY_FIRST_CLAUSE_WORDS', { default: 6, min: 0, max: 100 }),
    llmWaitMaxMs: intVar(env, 'LLM_WAIT_MAX_MS', { default: 4000, min: 0, max: 30_000 }),
    llmWaitStepMs: intVar(env, 'LLM_WAIT_STEP_MS', { default: 1500, min: 100, max: 30_000 }),
    llmPreemptive: boolVar(env, 'LLM_PREEMPTIVE', { default: true }),
    pauseLearningMaxMs: intVar(env, 'TURN_PAUSE_LEARNING_MAX_MS', { default: 600, min: 0, max: 3000 }),
    wordsWaitMs: intVar(env, 'TURN_WORDS_WAIT_MS', { default: 1500, min: 0, max: 10_000 }),
  };
}

function providerKey(env: Env, name: string): string {
  const value = optionalString(env, name) ?? optionalString(env, 'OPENAI_API_KEY');
  if (value === undefined) throw new ConfigError(name, 'is required (or set OPENAI_API_KEY for all model providers)');
  return value;
}

function transcriptStore(env: Env): string {
  const raw = optionalString(env, 'TRANSCRIPT_STORE') ?? 'file://./transcripts';
  if (raw.startsWith('file://')) {
    const path = raw.slice('file://'.length);
    if (path === '') throw new ConfigError('TRANSCRIPT_STORE', 'needs a folder after file://');
    return pathToFileURL(resolve(path)).href;
  }
  if (/^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/.*)?$/.test(raw)) return raw.replace(/\/+$/, '');
  throw new ConfigError('TRANSCRIPT_STORE', `must be file://<folder> or s3://<bucket>[/<prefix>], got "${raw}"`);
}

/** A Daily bot process takes at most DAILY_SESSIONS_PER_BOT sessions (lib/daily-sessions.ts). */
function botSessionsPerProcess(env: Env, roomProvider: RoomChoice['roomProvider']): number {
  const perProcess = intVar(env, 'BOT_SESSIONS_PER_PROCESS', { default: 1, min: 1, max: 64 });
  if (perProcess > DAILY_SESSIONS_PER_BOT && roomProvider === 'daily') {
    throw new ConfigError('BOT_SESSIONS_PER_PROCESS', `must be ${DAILY_SESSIONS_PER_BOT} with ROOM_PROVIDER=daily (each Daily bot holds one prewarmed bridge)`);
  }
  return perProcess;
}

export function loadConfig(env: Env): Readonly<WorkerConfig> {
  const port = intVar(env, 'PORT', { default: 7860, min: 0, max: 65535 });
  const certFile = optionalString(env, 'TLS_CERT_FILE');
  const keyFile = optionalString(env, 'TLS_KEY_FILE');
  if ((certFile === undefined) !== (keyFile === undefined)) {
    throw new ConfigError(certFile === undefined ? 'TLS_CERT_FILE' : 'TLS_KEY_FILE', 'must be set together with the other of TLS_CERT_FILE/TLS_KEY_FILE');
  }
  const tls = certFile && keyFile ? { certFile, keyFile } : null;
  const workerToken = requiredString(env, 'WORKER_TOKEN', { hint: 'the shared bearer token that the service sends on spawn calls' });
  if (workerToken.length < 16) throw new ConfigError('WORKER_TOKEN', 'must be at least 16 characters long');

  // ROOM_PROVIDER and the variables of the transport it names.
  const rooms = readRoomChoice(env, { workerToken });

  const heartbeatIntervalMs = intVar(env, 'HEARTBEAT_INTERVAL_MS', { default: 2000, min: 100, max: 60_000 });
  const heartbeatTtlMs = intVar(env, 'HEARTBEAT_TTL_MS', { default: heartbeatIntervalMs * 3, min: 200, max: 300_000 });
  if (heartbeatTtlMs < heartbeatIntervalMs * 2) throw new ConfigError('HEARTBEAT_TTL_MS', `must be at least twice HEARTBEAT_INTERVAL_MS (${heartbeatIntervalMs})`);
  const maxSessionSeconds = intVar(env, 'MAX_SESSION_SECONDS', { default: 1800, min: 5, max: 4 * 3600 });

  const config: WorkerConfig = {
    port,
    metricsPort: intVar(env, 'METRICS_PORT', { default: 9090, min: 0, max: 65535 }),
    host: optionalString(env, 'HOST') ?? '0.0.0.0',
    podName: optionalString(env, 'POD_NAME') ?? `${hostname()}-${process.pid}`,
    publicUrl: requiredUrl(env, 'PUBLIC_URL', { schemes: ['http', 'https'], default: `${tls ? 'https' : 'http'}://127.0.0.1:${port}` }),
    tls,
    workerToken,
    redis: redisSettings(env, requiredUrl(env, 'REDIS_URL', { schemes: ['redis', 'rediss'], default: 'redis://127.0.0.1:6379' })),
    redisKeyPrefix: optionalString(env, 'REDIS_KEY_PREFIX') ?? 'voice',
    warmPoolSize: intVar(env, 'WARM_POOL_SIZE', { default: 2, min: 0, max: 256 }),
    botSessionsPerProcess: botSessionsPerProcess(env, rooms.roomProvider),
    turnModelThread: boolVar(env, 'TURN_MODEL_THREAD', { default: false }),
    heartbeatIntervalMs,
    heartbeatTtlMs,
    spawnBudgetMs: intVar(env, 'SPAWN_BUDGET_MS', { default: 1000, min: 50, max: 10_000 }),
    retryAfterSeconds: intVar(env, 'RETRY_AFTER_SECONDS', { default: 2, min: 1, max: 600 }),
    spawnBodyLimitBytes: intVar(env, 'SPAWN_BODY_LIMIT_BYTES', { default: 65_536, min: 1024, max: 1_048_576 }),
    // Keep-alive longer than the usual load balancer's 60 s idle timeout, so that it never reuses a connection we just closed.
    publicLimits: readListenLimits(env, 'PUBLIC', { maxConnections: 1000, headersTimeoutSeconds: 10, keepAliveTimeoutSeconds: 65 }),
    // The kubelet and a scraper: a few connections, quick requests.
    managementLimits: readListenLimits(env, 'METRICS', { maxConnections: 64, headersTimeoutSeconds: 10, keepAliveTimeoutSeconds: 5, requestTimeoutSeconds: 15 }),
    sessionRecordTtlSeconds: intVar(env, 'SESSION_RECORD_TTL_SECONDS', { default: 86_400, min: maxSessionSeconds, max: 30 * 86_400 }),
    drainGraceSeconds: intVar(env, 'DRAIN_GRACE_SECONDS', { default: 30, min: 0, max: 3600 }),
    ...rooms,
    backendUrl: requiredUrl(env, 'BACKEND_URL', { schemes: ['https', 'http'] }),
    reportTimeoutMs: intVar(env, 'REPORT_TIMEOUT_MS', { default: 8000, min: 100, max: 60_000 }),
    reportAttempts: intVar(env, 'REPORT_ATTEMPTS', { default: 5, min: 1, max: 20 }),
    outcomeReportDeadlineSeconds: intVar(env, 'OUTCOME_REPORT_DEADLINE_SECONDS', { default: 21_600, min: 10, max: 7 * 86_400 }),
    outcomeRetryMaxSeconds: intVar(env, 'OUTCOME_RETRY_MAX_SECONDS', { default: 60, min: 1, max: 3600 }),
    outcomeOutboxPollMs: intVar(env, 'OUTCOME_OUTBOX_POLL_MS', { default: 2000, min: 100, max: 60_000 }),
    llm: { baseURL: requiredUrl(env, 'LLM_BASE_URL', { schemes: ['https', 'http'], default: 'https://api.openai.com/v1' }), apiKey: providerKey(env, 'LLM_API_KEY'), model: optionalString(env, 'LLM_MODEL') ?? 'gpt-4o-mini' },
    stt: { baseURL: requiredUrl(env, 'STT_BASE_URL', { schemes: ['https', 'http'], default: 'https://api.openai.com/v1' }), apiKey: providerKey(env, 'STT_API_KEY'), model: optionalString(env, 'STT_MODEL') ?? 'whisper-1' },
    tts: {
      baseURL: requiredUrl(env, 'TTS_BASE_URL', { schemes: ['https', 'http'], default: 'https://api.openai.com/v1' }),
      apiKey: providerKey(env, 'TTS_API_KEY'),
      model: optionalString(env, 'TTS_MODEL') ?? 'tts-1',
      voice: optionalString(env, 'TTS_VOICE') ?? 'alloy',
    },
    providerTimeoutMs: intVar(env, 'PROVIDER_TIMEOUT_MS', { default: 20_000, min: 100, max: 120_000 }),
    providerRetries: intVar(env, 'PROVIDER_RETRIES', { default: 1, min: 0, max: 5 }),
    providerKeepAliveMs: intVar(env, 'PROVIDER_KEEPALIVE_MS', { default: 60_000, min: 0, max: 600_000 }),
    providerWarm: boolVar(env, 'PROVIDER_WARM', { default: true }),
    transcriptStore: transcriptStore(env),
    s3: { endpoint: optionalString(env, 'S3_ENDPOINT') ?? null, region: optionalString(env, 'S3_REGION') ?? optionalString(env, 'AWS_REGION') ?? 'us-east-1', forcePathStyle: boolVar(env, 'S3_FORCE_PATH_STYLE', { default: false }) },
    maxSessionSeconds,
    idleTimeoutSeconds: intVar(env, 'IDLE_TIMEOUT_SECONDS', { default: 30, min: 1, max: 3600 }),
    // Contract C6: an unjoined claimed slot is freed quickly, so nobody holds warm slots by connecting alone.
    joinTimeoutSeconds: intVar(env, 'JOIN_TIMEOUT_SECONDS', { default: 30, min: 1, max: 3600 }),
    vad: {
      thresholdDbfs: intVar(env, 'VAD_THRESHOLD_DBFS', { default: -45, min: -90, max: 0 }),
      silenceMs: intVar(env, 'VAD_SILENCE_MS', { default: 700, min: 100, max: 10_000 }),
      minSpeechMs: intVar(env, 'VAD_MIN_SPEECH_MS', { default: 120, min: 20, max: 10_000 }),
      maxUtteranceSeconds: intVar(env, 'MAX_UTTERANCE_SECONDS', { default: 60, min: 1, max: 600 }),
    },
    turns: turnSettings(env, optionalString(env, 'STT_MODEL') ?? 'whisper-1'),
  };
  urlVar(env, 'S3_ENDPOINT', { schemes: ['http', 'https'] });
  return Object.freeze(config);
}
