import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DAILY_SESSIONS_PER_BOT } from '../lib/daily-sessions.ts';
import { boolVar, ConfigError, intVar, optionalString, requiredString, requiredUrl, urlVar, type Env } from '../lib/env.ts';
import { readListenLimits, type ListenLimits } from '../lib/listen-limits.ts';
import { readTurnPolicy } from './bot/policy/read-turn-policy.ts';
import type { TurnPolicy } from './bot/policy/turn-policy.ts';
import { redisSettings, type RedisSettings } from './redis-connection.ts';
import { readRoomChoice, type RoomChoice } from './rooms/registry.ts';

export { ConfigError };
export type { TurnPolicy };
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
  /** Turn-taking: the bot's turn policy, read and checked in one place (bot/policy/, docs/worker.md "Turn-taking"). */
  turns: TurnPolicy;
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
    throw new ConfigError(
      'BOT_SESSIONS_PER_PROCESS',
      `must be ${DAILY_SESSIONS_PER_BOT} with ROOM_PROVIDER=daily (each Daily bot holds one prewarmed bridge)`,
    );
  }
  return perProcess;
}

export function loadConfig(env: Env): Readonly<WorkerConfig> {
  const port = intVar(env, 'PORT', { default: 7860, min: 0, max: 65535 });
  const certFile = optionalString(env, 'TLS_CERT_FILE');
  const keyFile = optionalString(env, 'TLS_KEY_FILE');
  if ((certFile === undefined) !== (keyFile === undefined)) {
    throw new ConfigError(
      certFile === undefined ? 'TLS_CERT_FILE' : 'TLS_KEY_FILE',
      'must be set together with the other of TLS_CERT_FILE/TLS_KEY_FILE',
    );
  }
  const tls = certFile && keyFile ? { certFile, keyFile } : null;
  const workerToken = requiredString(env, 'WORKER_TOKEN', { hint: 'the shared bearer token that the service sends on spawn calls' });
  if (workerToken.length < 16) throw new ConfigError('WORKER_TOKEN', 'must be at least 16 characters long');

  // ROOM_PROVIDER and the variables of the transport it names.
  const rooms = readRoomChoice(env, { workerToken });

  const heartbeatIntervalMs = intVar(env, 'HEARTBEAT_INTERVAL_MS', { default: 2000, min: 100, max: 60_000 });
  const heartbeatTtlMs = intVar(env, 'HEARTBEAT_TTL_MS', { default: heartbeatIntervalMs * 3, min: 200, max: 300_000 });
  if (heartbeatTtlMs < heartbeatIntervalMs * 2)
    throw new ConfigError('HEARTBEAT_TTL_MS', `must be at least twice HEARTBEAT_INTERVAL_MS (${heartbeatIntervalMs})`);
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
    managementLimits: readListenLimits(env, 'METRICS', {
      maxConnections: 64,
      headersTimeoutSeconds: 10,
      keepAliveTimeoutSeconds: 5,
      requestTimeoutSeconds: 15,
    }),
    sessionRecordTtlSeconds: intVar(env, 'SESSION_RECORD_TTL_SECONDS', { default: 86_400, min: maxSessionSeconds, max: 30 * 86_400 }),
    drainGraceSeconds: intVar(env, 'DRAIN_GRACE_SECONDS', { default: 30, min: 0, max: 3600 }),
    ...rooms,
    backendUrl: requiredUrl(env, 'BACKEND_URL', { schemes: ['https', 'http'] }),
    reportTimeoutMs: intVar(env, 'REPORT_TIMEOUT_MS', { default: 8000, min: 100, max: 60_000 }),
    reportAttempts: intVar(env, 'REPORT_ATTEMPTS', { default: 5, min: 1, max: 20 }),
    outcomeReportDeadlineSeconds: intVar(env, 'OUTCOME_REPORT_DEADLINE_SECONDS', { default: 21_600, min: 10, max: 7 * 86_400 }),
    outcomeRetryMaxSeconds: intVar(env, 'OUTCOME_RETRY_MAX_SECONDS', { default: 60, min: 1, max: 3600 }),
    outcomeOutboxPollMs: intVar(env, 'OUTCOME_OUTBOX_POLL_MS', { default: 2000, min: 100, max: 60_000 }),
    llm: {
      baseURL: requiredUrl(env, 'LLM_BASE_URL', { schemes: ['https', 'http'], default: 'https://api.openai.com/v1' }),
      apiKey: providerKey(env, 'LLM_API_KEY'),
      model: optionalString(env, 'LLM_MODEL') ?? 'gpt-4o-mini',
    },
    stt: {
      baseURL: requiredUrl(env, 'STT_BASE_URL', { schemes: ['https', 'http'], default: 'https://api.openai.com/v1' }),
      apiKey: providerKey(env, 'STT_API_KEY'),
      model: optionalString(env, 'STT_MODEL') ?? 'whisper-1',
    },
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
    s3: {
      endpoint: optionalString(env, 'S3_ENDPOINT') ?? null,
      region: optionalString(env, 'S3_REGION') ?? optionalString(env, 'AWS_REGION') ?? 'us-east-1',
      forcePathStyle: boolVar(env, 'S3_FORCE_PATH_STYLE', { default: false }),
    },
    maxSessionSeconds,
    idleTimeoutSeconds: intVar(env, 'IDLE_TIMEOUT_SECONDS', { default: 30, min: 1, max: 3600 }),
    // Contract C6: an unjoined claimed slot is freed quickly, so nobody holds warm slots by connecting alone.
    joinTimeoutSeconds: intVar(env, 'JOIN_TIMEOUT_SECONDS', { default: 30, min: 1, max: 3600 }),
    turns: readTurnPolicy(env),
  };
  urlVar(env, 'S3_ENDPOINT', { schemes: ['http', 'https'] });
  return Object.freeze(config);
}
