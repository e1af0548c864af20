/**
 * The worker container's environment, built from the pool (the contract is worker/config.ts's
 * `loadConfig`). Provider keys only ever come from Secrets, never as values.
 */
import { METRICS_PORT, WORKER_PORT, type SecretKeyRef, type VoiceWorkerPool } from '../types.ts';
import { sessionsPerReplica } from '../capacity.ts';
import { endpointOf, publicUrlOf } from './common.ts';
import { selfHostedSpeech, speechBaseUrl } from './speech-common.ts';

export type EnvVar =
  | { name: string; value: string }
  | { name: string; valueFrom: { secretKeyRef: SecretKeyRef } }
  | { name: string; valueFrom: { fieldRef: { fieldPath: string } } };

/** Seconds the pre-stop step waits so endpoints drop the pod before the worker gets SIGTERM. */
export const PRE_STOP_SECONDS = 10;
/** Seconds kept back from the grace period for the worker's own shutdown after draining. */
export const DRAIN_MARGIN_SECONDS = 10;
/** worker/config.ts accepts DRAIN_GRACE_SECONDS up to this. */
export const WORKER_MAX_DRAIN_SECONDS = 3600;
/** Where podTLS's Secret is mounted (C4). */
export const POD_TLS_DIR = '/etc/voice-worker/tls';
/** Where redis.tls.caSecret's key is mounted, as the file REDIS_CA_KEY in this folder. */
export const REDIS_CA_DIR = '/etc/voice-worker/redis-ca';
export const REDIS_CA_KEY = 'ca.crt';

/**
 * Every name the operator may set, whatever the pool's fields: extraEnv may not use them. The CRD's
 * CEL rule carries the same list (a unit test compares the two).
 */
export const RESERVED_ENV = [
  'PORT',
  'METRICS_PORT',
  'POD_NAME',
  'PUBLIC_URL',
  'WORKER_TOKEN',
  'REDIS_URL',
  'REDIS_KEY_PREFIX',
  'BACKEND_URL',
  'WARM_POOL_SIZE',
  'DRAIN_GRACE_SECONDS',
  'ROOM_PROVIDER',
  'DAILY_API_KEY',
  'LIVEKIT_URL',
  'LIVEKIT_API_KEY',
  'LIVEKIT_API_SECRET',
  'LLM_API_KEY',
  'STT_API_KEY',
  'TTS_API_KEY',
  'OPENAI_API_KEY',
  'LLM_BASE_URL',
  'LLM_MODEL',
  'STT_BASE_URL',
  'STT_MODEL',
  'TTS_BASE_URL',
  'TTS_MODEL',
  'TTS_VOICE',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_SERVICE_NAME',
  'MAX_SESSION_SECONDS',
  'TRANSCRIPT_STORE',
  'TLS_CERT_FILE',
  'TLS_KEY_FILE',
  'REDIS_SENTINELS',
  'REDIS_SENTINEL_MASTER',
  'REDIS_SENTINEL_USERNAME',
  'REDIS_SENTINEL_PASSWORD',
  'REDIS_SENTINEL_TLS',
  'REDIS_USERNAME',
  'REDIS_PASSWORD',
  'REDIS_TLS_CA_FILE',
] as const;

/**
 * Names that change how a process of the worker's image starts: the dynamic loader, Node's and
 * Python's start-up hooks and module paths (the Daily bridge is Python), shell start-up files,
 * OpenSSL's engines and modules, and the interpreter the worker runs for the bridge. Set through
 * extraEnv they would run code the image did not choose (`NODE_OPTIONS=--import=data:...`), so the
 * CRD refuses them like RESERVED_ENV (a unit test compares its rule with these two lists).
 */
export const LOADER_ENV_PREFIXES = ['LD_', 'NODE_', 'PYTHON', 'BASH_', 'OPENSSL_', 'PERL'] as const;
export const LOADER_ENV = [
  'GCONV_PATH',
  'GLIBC_TUNABLES',
  'LOCPATH',
  'PATH',
  'ENV',
  'SHELLOPTS',
  'PS4',
  'PROMPT_COMMAND',
  'DAILY_BRIDGE_PYTHON',
] as const;

/** Whether extraEnv may not set this name because it reaches a loader or a start-up hook. */
export const isLoaderEnv = (name: string): boolean =>
  (LOADER_ENV as readonly string[]).includes(name) || LOADER_ENV_PREFIXES.some((p) => name.startsWith(p));

function fromSecret(name: string, ref: SecretKeyRef | undefined): EnvVar[] {
  return ref ? [{ name, valueFrom: { secretKeyRef: { name: ref.name, key: ref.key } } }] : [];
}

function plain(name: string, value: string | number | undefined): EnvVar[] {
  return value === undefined || value === '' ? [] : [{ name, value: String(value) }];
}

/** Two pools on one Redis must not share a warm pool or session records. */
export const redisKeyPrefix = (pool: VoiceWorkerPool): string => `voice:${pool.metadata.namespace}:${pool.metadata.name}`;

/**
 * The worker drains for what is left of the pod's grace period after the pre-stop sleep, minus a
 * margin for closing; so a rollout or node drain lets live interviews finish instead of cutting them.
 */
export function drainGraceSeconds(terminationGracePeriodSeconds: number): number {
  return Math.max(0, Math.min(WORKER_MAX_DRAIN_SECONDS, terminationGracePeriodSeconds - PRE_STOP_SECONDS - DRAIN_MARGIN_SECONDS));
}

export function workerEnv(pool: VoiceWorkerPool): EnvVar[] {
  return [...managedEnv(pool), ...(pool.spec.extraEnv ?? []).map(extra)];
}

function extra(e: NonNullable<VoiceWorkerPool['spec']['extraEnv']>[number]): EnvVar {
  return e.valueFrom
    ? { name: e.name, valueFrom: { secretKeyRef: { name: e.valueFrom.secretKeyRef.name, key: e.valueFrom.secretKeyRef.key } } }
    : { name: e.name, value: e.value ?? '' };
}

/**
 * The session store (docs/worker.md, "Session store"). With Sentinel and no URL, the URL carries
 * only the scheme: its host is never used, the Sentinels name the master.
 */
function redisEnv(pool: VoiceWorkerPool): EnvVar[] {
  const { redis } = pool.spec;
  const scheme = redis.tls?.enabled ? 'rediss' : 'redis';
  const url = redis.urlSecret ? fromSecret('REDIS_URL', redis.urlSecret) : plain('REDIS_URL', redis.url ?? `${scheme}://sentinel-master`);
  const s = redis.sentinel;
  return [
    ...url,
    ...plain('REDIS_USERNAME', redis.username),
    ...fromSecret('REDIS_PASSWORD', redis.passwordSecret),
    ...(redis.tls?.caSecret ? plain('REDIS_TLS_CA_FILE', `${REDIS_CA_DIR}/${REDIS_CA_KEY}`) : []),
    ...(s
      ? [
          ...plain('REDIS_SENTINELS', s.hosts.join(',')),
          ...plain('REDIS_SENTINEL_MASTER', s.masterName ?? 'mymaster'),
          ...plain('REDIS_SENTINEL_USERNAME', s.username),
          ...fromSecret('REDIS_SENTINEL_PASSWORD', s.passwordSecret),
          ...plain('REDIS_SENTINEL_TLS', s.tls ? 'true' : undefined),
        ]
      : []),
  ];
}

function roomEnv(pool: VoiceWorkerPool): EnvVar[] {
  const { spec } = pool;
  if (spec.roomProvider === 'daily') return fromSecret('DAILY_API_KEY', spec.secrets.roomApiKey);
  if (spec.roomProvider === 'livekit' && spec.livekit) {
    const { url, secretName, apiKeyKey, apiSecretKey } = spec.livekit;
    return [
      ...plain('LIVEKIT_URL', url),
      ...fromSecret('LIVEKIT_API_KEY', { name: secretName, key: apiKeyKey }),
      ...fromSecret('LIVEKIT_API_SECRET', { name: secretName, key: apiSecretKey }),
    ];
  }
  return [];
}

/**
 * Speech-to-text and text-to-speech: the pool's own speech server when it is self-hosted (its
 * Service's cluster address, its token as both keys; it takes any model and voice name, so the
 * pool's names pass through), else the providers the pool names.
 */
function speechEnv(pool: VoiceWorkerPool): EnvVar[] {
  const { spec } = pool;
  const models = spec.models ?? {};
  const own = selfHostedSpeech(pool);
  return [
    ...fromSecret('STT_API_KEY', own ? own.tokenSecret : spec.secrets.sttApiKey),
    ...fromSecret('TTS_API_KEY', own ? own.tokenSecret : spec.secrets.ttsApiKey),
    ...plain('STT_BASE_URL', own ? speechBaseUrl(pool) : models.stt?.baseUrl),
    ...plain('STT_MODEL', models.stt?.model),
    ...plain('TTS_BASE_URL', own ? speechBaseUrl(pool) : models.tts?.baseUrl),
    ...plain('TTS_MODEL', models.tts?.model),
    ...plain('TTS_VOICE', models.tts?.voice),
  ];
}

/** The variables the operator owns (extraEnv may not set these). */
export function managedEnv(pool: VoiceWorkerPool): EnvVar[] {
  const { spec } = pool;
  const models = spec.models ?? {};
  return [
    ...plain('PORT', WORKER_PORT),
    ...plain('METRICS_PORT', METRICS_PORT),
    { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    ...plain('PUBLIC_URL', publicUrlOf(pool) ?? endpointOf(pool).replace(/\/$/, '')),
    ...fromSecret('WORKER_TOKEN', spec.secrets.workerToken),
    ...redisEnv(pool),
    ...plain('REDIS_KEY_PREFIX', redisKeyPrefix(pool)),
    ...plain('BACKEND_URL', spec.backendUrl),
    ...plain('WARM_POOL_SIZE', sessionsPerReplica(spec)),
    ...plain('DRAIN_GRACE_SECONDS', drainGraceSeconds(spec.terminationGracePeriodSeconds)),
    ...plain('ROOM_PROVIDER', spec.roomProvider),
    ...roomEnv(pool),
    ...fromSecret('LLM_API_KEY', spec.secrets.llmApiKey),
    ...fromSecret('OPENAI_API_KEY', spec.secrets.openaiApiKey),
    ...plain('LLM_BASE_URL', models.llm?.baseUrl),
    ...plain('LLM_MODEL', models.llm?.model),
    ...speechEnv(pool),
    ...plain('OTEL_EXPORTER_OTLP_ENDPOINT', spec.telemetry?.otlpEndpoint),
    ...plain('OTEL_SERVICE_NAME', spec.telemetry?.serviceName ?? 'voice-worker'),
    ...plain('MAX_SESSION_SECONDS', spec.maxSessionSeconds),
    ...plain('TRANSCRIPT_STORE', spec.transcriptStore),
    ...(spec.podTLS ? [...plain('TLS_CERT_FILE', `${POD_TLS_DIR}/tls.crt`), ...plain('TLS_KEY_FILE', `${POD_TLS_DIR}/tls.key`)] : []),
  ];
}
