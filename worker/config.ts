import { createHmac } from 'node:crypto';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The worker's configuration: read once from the environment, validated, frozen.
 * `loadConfig(env)` is pure; main.ts turns a ConfigError into one clear line and exit code 1.
 * Every variable and its default is documented in docs/worker.md.
 */
export class ConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, problem: string) {
    super(`${variable} ${problem}`);
    this.name = 'ConfigError';
    this.variable = variable;
  }
}

export type RoomProviderName = 'daily' | 'local';

export interface ProviderEndpoint {
  baseURL: string;
  apiKey: string;
  model: string;
}

export interface WorkerConfig {
  port: number;
  host: string;
  podName: string;
  publicUrl: string;
  tls: { certFile: string; keyFile: string } | null;
  workerToken: string;
  redisUrl: string;
  redisKeyPrefix: string;
  warmPoolSize: number;
  heartbeatIntervalMs: number;
  heartbeatTtlMs: number;
  spawnBudgetMs: number;
  retryAfterSeconds: number;
  spawnBodyLimitBytes: number;
  sessionRecordTtlSeconds: number;
  drainGraceSeconds: number;
  roomProvider: RoomProviderName;
  roomTokenSecret: string;
  daily: { apiKey: string; apiUrl: string; domainId: string | null; roomTtlSeconds: number } | null;
  backendUrl: string;
  reportTimeoutMs: number;
  reportAttempts: number;
  llm: ProviderEndpoint;
  stt: ProviderEndpoint;
  tts: ProviderEndpoint & { voice: string };
  providerTimeoutMs: number;
  providerRetries: number;
  transcriptStore: string;
  s3: { endpoint: string | null; region: string; forcePathStyle: boolean };
  maxSessionSeconds: number;
  idleTimeoutSeconds: number;
  joinTimeoutSeconds: number;
  vad: { thresholdDbfs: number; silenceMs: number; minSpeechMs: number; maxUtteranceSeconds: number };
}

type Env = Record<string, string | undefined>;

function read(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function required(env: Env, name: string, hint: string): string {
  const value = read(env, name);
  if (value === undefined) throw new ConfigError(name, `is required: ${hint}`);
  return value;
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  if (!/^-?\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  if (/^(1|true|yes)$/i.test(raw)) return true;
  if (/^(0|false|no)$/i.test(raw)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

function url(env: Env, name: string, fallback: string | undefined, schemes: string[]): string {
  const raw = read(env, name) ?? fallback;
  if (raw === undefined) throw new ConfigError(name, `is required (a ${schemes.join(' or ')} URL)`);
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be a URL, got "${raw}"`);
  }
  if (!schemes.includes(parsed.protocol.replace(':', ''))) {
    throw new ConfigError(name, `must use ${schemes.join(' or ')}, got "${parsed.protocol}"`);
  }
  return raw.replace(/\/+$/, '');
}

function providerKey(env: Env, name: string): string {
  const value = read(env, name) ?? read(env, 'OPENAI_API_KEY');
  if (value === undefined) throw new ConfigError(name, 'is required (or set OPENAI_API_KEY for all model providers)');
  return value;
}

function transcriptStore(env: Env): string {
  const raw = read(env, 'TRANSCRIPT_STORE') ?? 'file://./transcripts';
  if (raw.startsWith('file://')) {
    const path = raw.slice('file://'.length);
    if (path === '') throw new ConfigError('TRANSCRIPT_STORE', 'needs a folder after file://');
    return pathToFileURL(resolve(path)).href;
  }
  if (/^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/.*)?$/.test(raw)) return raw.replace(/\/+$/, '');
  throw new ConfigError('TRANSCRIPT_STORE', `must be file://<folder> or s3://<bucket>[/<prefix>], got "${raw}"`);
}

export function loadConfig(env: Env): Readonly<WorkerConfig> {
  const port = int(env, 'PORT', 7860, 0, 65535);
  const certFile = read(env, 'TLS_CERT_FILE');
  const keyFile = read(env, 'TLS_KEY_FILE');
  if ((certFile === undefined) !== (keyFile === undefined)) {
    throw new ConfigError(certFile === undefined ? 'TLS_CERT_FILE' : 'TLS_KEY_FILE', 'must be set together with the other of TLS_CERT_FILE/TLS_KEY_FILE');
  }
  const tls = certFile && keyFile ? { certFile, keyFile } : null;
  const workerToken = required(env, 'WORKER_TOKEN', 'the shared bearer token that the service sends on spawn calls');
  if (workerToken.length < 16) throw new ConfigError('WORKER_TOKEN', 'must be at least 16 characters long');

  const roomProvider = (read(env, 'ROOM_PROVIDER') ?? 'daily') as RoomProviderName;
  if (roomProvider !== 'daily' && roomProvider !== 'local') {
    throw new ConfigError('ROOM_PROVIDER', `must be "daily" or "local", got "${String(roomProvider)}"`);
  }
  const daily =
    roomProvider === 'daily'
      ? {
          apiKey: required(env, 'DAILY_API_KEY', 'the video-room provider API key (ROOM_PROVIDER=daily)'),
          apiUrl: url(env, 'DAILY_API_URL', 'https://api.daily.co/v1', ['https', 'http']),
          domainId: read(env, 'DAILY_DOMAIN_ID') ?? null,
          roomTtlSeconds: int(env, 'DAILY_ROOM_TTL_SECONDS', 3600, 300, 7 * 86400),
        }
      : null;

  const heartbeatIntervalMs = int(env, 'HEARTBEAT_INTERVAL_MS', 2000, 100, 60_000);
  const heartbeatTtlMs = int(env, 'HEARTBEAT_TTL_MS', heartbeatIntervalMs * 3, 200, 300_000);
  if (heartbeatTtlMs < heartbeatIntervalMs * 2) throw new ConfigError('HEARTBEAT_TTL_MS', `must be at least twice HEARTBEAT_INTERVAL_MS (${heartbeatIntervalMs})`);
  const maxSessionSeconds = int(env, 'MAX_SESSION_SECONDS', 1800, 5, 4 * 3600);

  const config: WorkerConfig = {
    port,
    host: read(env, 'HOST') ?? '0.0.0.0',
    podName: read(env, 'POD_NAME') ?? `${hostname()}-${process.pid}`,
    publicUrl: url(env, 'PUBLIC_URL', `${tls ? 'https' : 'http'}://127.0.0.1:${port}`, ['http', 'https']),
    tls,
    workerToken,
    redisUrl: url(env, 'REDIS_URL', 'redis://127.0.0.1:6379', ['redis', 'rediss']),
    redisKeyPrefix: read(env, 'REDIS_KEY_PREFIX') ?? 'voice',
    warmPoolSize: int(env, 'WARM_POOL_SIZE', 2, 0, 256),
    heartbeatIntervalMs,
    heartbeatTtlMs,
    spawnBudgetMs: int(env, 'SPAWN_BUDGET_MS', 1000, 50, 10_000),
    retryAfterSeconds: int(env, 'RETRY_AFTER_SECONDS', 2, 1, 600),
    spawnBodyLimitBytes: int(env, 'SPAWN_BODY_LIMIT_BYTES', 65_536, 1024, 1_048_576),
    sessionRecordTtlSeconds: int(env, 'SESSION_RECORD_TTL_SECONDS', 86_400, maxSessionSeconds, 30 * 86_400),
    drainGraceSeconds: int(env, 'DRAIN_GRACE_SECONDS', 30, 0, 3600),
    roomProvider,
    // Derived from the shared WORKER_TOKEN by default, so every replica signs and checks the same way.
    roomTokenSecret: read(env, 'ROOM_TOKEN_SECRET') ?? createHmac('sha256', workerToken).update('local-room-tokens').digest('base64url'),
    daily,
    backendUrl: url(env, 'BACKEND_URL', undefined, ['https', 'http']),
    reportTimeoutMs: int(env, 'REPORT_TIMEOUT_MS', 8000, 100, 60_000),
    reportAttempts: int(env, 'REPORT_ATTEMPTS', 5, 1, 20),
    llm: { baseURL: url(env, 'LLM_BASE_URL', 'https://api.openai.com/v1', ['https', 'http']), apiKey: providerKey(env, 'LLM_API_KEY'), model: read(env, 'LLM_MODEL') ?? 'gpt-4o-mini' },
    stt: { baseURL: url(env, 'STT_BASE_URL', 'https://api.openai.com/v1', ['https', 'http']), apiKey: providerKey(env, 'STT_API_KEY'), model: read(env, 'STT_MODEL') ?? 'whisper-1' },
    tts: {
      baseURL: url(env, 'TTS_BASE_URL', 'https://api.openai.com/v1', ['https', 'http']),
      apiKey: providerKey(env, 'TTS_API_KEY'),
      model: read(env, 'TTS_MODEL') ?? 'tts-1',
      voice: read(env, 'TTS_VOICE') ?? 'alloy',
    },
    providerTimeoutMs: int(env, 'PROVIDER_TIMEOUT_MS', 20_000, 100, 120_000),
    providerRetries: int(env, 'PROVIDER_RETRIES', 1, 0, 5),
    transcriptStore: transcriptStore(env),
    s3: { endpoint: read(env, 'S3_ENDPOINT') ?? null, region: read(env, 'S3_REGION') ?? read(env, 'AWS_REGION') ?? 'us-east-1', forcePathStyle: bool(env, 'S3_FORCE_PATH_STYLE', false) },
    maxSessionSeconds,
    idleTimeoutSeconds: int(env, 'IDLE_TIMEOUT_SECONDS', 30, 1, 3600),
    joinTimeoutSeconds: int(env, 'JOIN_TIMEOUT_SECONDS', 120, 1, 3600),
    vad: {
      thresholdDbfs: int(env, 'VAD_THRESHOLD_DBFS', -45, -90, 0),
      silenceMs: int(env, 'VAD_SILENCE_MS', 700, 100, 10_000),
      minSpeechMs: int(env, 'VAD_MIN_SPEECH_MS', 120, 20, 10_000),
      maxUtteranceSeconds: int(env, 'MAX_UTTERANCE_SECONDS', 60, 1, 600),
    },
  };
  if (config.s3.endpoint !== null) url(env, 'S3_ENDPOINT', undefined, ['http', 'https']);
  return Object.freeze(config);
}
