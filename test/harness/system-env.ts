/**
 * The whole system's configuration as data: the seed of the demo workspace and the environment of
 * each process. Pure: startSystem (system.ts) passes ports, paths and secrets in and does the I/O.
 */
export const DEMO_KEYS = {
  publishable: 'pk_test_demo0000000000000000',
  secret: 'sk_test_demo0000000000000000',
  webhookSecret: 'whsec_demo0000000000000000',
} as const;

export const INTERVIEW_ID = 'dpl_onboarding';
export const INTERVIEW = {
  title: 'Onboarding feedback',
  language: 'en',
  intro: 'Hi, thanks for joining. Two short questions.',
  questions: [
    { id: 'q1', text: 'How did you hear about us?', maxFollowUps: 1 },
    { id: 'q2', text: 'What should we improve first?', maxFollowUps: 1 },
  ],
  closing: 'Thanks, that is all.',
};

/**
 * A second interview for turn-taking tests: its first question is long (about seven seconds), so a
 * respondent can cut in while it is asked; no follow-ups, so every answer moves the interview on.
 */
export const TURN_INTERVIEW_ID = 'dpl_turns';
export const TURN_INTERVIEW = {
  title: 'Turn-taking',
  language: 'en',
  intro: 'Hi.',
  questions: [
    {
      id: 'q1',
      text: 'Please tell me, in as much detail as you like, how you first heard about us, and what you expected before you signed up?',
      maxFollowUps: 1,
    },
    { id: 'q2', text: 'What should we improve first?', maxFollowUps: 0 },
  ],
  closing: 'Thanks, that is all.',
};

/** The api-stub's seed: one workspace with its keys, the interview and the webhook receiver. */
export function demoSeed(webhookUrl: string): unknown {
  return {
    workspaces: [
      {
        id: 'ws_demo',
        name: 'Demo workspace',
        keys: { publishable: [DEMO_KEYS.publishable], secret: [DEMO_KEYS.secret] },
        deployments: [
          { id: INTERVIEW_ID, status: 'ACTIVE', expiresAt: null, interview: INTERVIEW },
          { id: TURN_INTERVIEW_ID, status: 'ACTIVE', expiresAt: null, interview: TURN_INTERVIEW },
        ],
        webhookEndpoints: [{ url: webhookUrl, secrets: [DEMO_KEYS.webhookSecret] }],
        selfHost: null,
      },
    ],
  };
}

/** Where the workers' model providers are: the local stand-in's URL, or real ones from the environment. */
export type ProviderSetting = { kind: 'fake'; url: string } | { kind: 'real'; env: Record<string, string> };

/** The provider variables the worker reads (docs/worker.md), passed through for real providers. */
const PROVIDER_VARS = [
  'OPENAI_API_KEY',
  'LLM_API_KEY',
  'LLM_BASE_URL',
  'LLM_MODEL',
  'STT_API_KEY',
  'STT_BASE_URL',
  'STT_MODEL',
  'TTS_API_KEY',
  'TTS_BASE_URL',
  'TTS_MODEL',
  'TTS_VOICE',
];

/**
 * Real providers when the environment has their keys: OPENAI_API_KEY, or a key for each of the
 * three (e.g. self-hosted OpenAI-compatible servers with their own base URLs). Else null.
 */
export function realProviders(env: NodeJS.ProcessEnv): Record<string, string> | null {
  const has = (name: string): boolean => Boolean(env[name]?.trim());
  if (!has('OPENAI_API_KEY') && !(has('LLM_API_KEY') && has('STT_API_KEY') && has('TTS_API_KEY'))) return null;
  return Object.fromEntries(PROVIDER_VARS.filter(has).map((name) => [name, env[name]!.trim()]));
}

export interface WorkerEnvInput {
  name: 'hosted' | 'self-hosted';
  port: number;
  /** The worker's management port (METRICS_PORT): probes and metrics, plain HTTP. */
  metricsPort: number;
  token: string;
  cert: { certFile: string; keyFile: string };
  redisUrl: string;
  /** Per-deployment Redis prefix: two deployments keep two warm pools. */
  redisKeyPrefix: string;
  backendUrl: string;
  providers: ProviderSetting;
  transcriptDir: string;
  otlpUrl: string;
  vadSilenceMs: number;
  logLevel: string;
  /** PATH and HOME of the parent, so the child finds the same tools. */
  base: NodeJS.ProcessEnv;
  /** The room settings (ROOM_PROVIDER and its variables); local rooms when absent. */
  rooms?: Record<string, string>;
  /** Self-hosted speech (speech/): these of the worker's speech providers go to it instead. */
  speech?: SelfHostedSpeech;
}

/** The speech server (test/harness/speech-server.ts) and which of the worker's providers it serves. */
export interface SelfHostedSpeech {
  url: string;
  token: string;
  serves: Array<'stt' | 'tts'>;
}

/**
 * The worker's variables that point its speech-to-text and/or text-to-speech at the speech server,
 * through the same OpenAI-compatible client as any provider. Decoding on two busy cores can take
 * seconds per answer, so the provider deadline is wide then.
 */
export function speechEnv(speech: SelfHostedSpeech | undefined): Record<string, string> {
  if (!speech) return {};
  // 18 s for a 3.5 s answer was seen on two cores at a load average of 22: the worker's longest deadline.
  const env: Record<string, string> = { PROVIDER_TIMEOUT_MS: '120000' };
  for (const role of speech.serves) {
    const prefix = role === 'stt' ? 'STT' : 'TTS';
    env[`${prefix}_BASE_URL`] = speech.url;
    env[`${prefix}_API_KEY`] = speech.token;
  }
  return env;
}

export function workerEnv(i: WorkerEnvInput): NodeJS.ProcessEnv {
  const providers =
    i.providers.kind === 'real'
      ? { ...i.providers.env, PROVIDER_TIMEOUT_MS: '20000' }
      : {
          OPENAI_API_KEY: 'sk-local-standin-000000',
          LLM_BASE_URL: i.providers.url,
          STT_BASE_URL: i.providers.url,
          TTS_BASE_URL: i.providers.url,
          PROVIDER_TIMEOUT_MS: '5000',
        };
  return {
    PATH: i.base.PATH,
    HOME: i.base.HOME,
    PORT: String(i.port),
    METRICS_PORT: String(i.metricsPort),
    HOST: '127.0.0.1',
    POD_NAME: `${i.name}-0`,
    TLS_CERT_FILE: i.cert.certFile,
    TLS_KEY_FILE: i.cert.keyFile,
    WORKER_TOKEN: i.token,
    REDIS_URL: i.redisUrl,
    REDIS_KEY_PREFIX: i.redisKeyPrefix,
    BACKEND_URL: i.backendUrl,
    ROOM_PROVIDER: 'local',
    ...i.rooms,
    ...providers,
    ...speechEnv(i.speech),
    WARM_POOL_SIZE: '1',
    HEARTBEAT_INTERVAL_MS: '500',
    IDLE_TIMEOUT_SECONDS: '20',
    JOIN_TIMEOUT_SECONDS: '30',
    VAD_SILENCE_MS: String(i.vadSilenceMs),
    DRAIN_GRACE_SECONDS: '2',
    TRANSCRIPT_STORE: `file://${i.transcriptDir}`,
    OTEL_EXPORTER_OTLP_ENDPOINT: i.otlpUrl,
    OTEL_SERVICE_NAME: `voice-worker-${i.name}`,
    OTEL_BSP_SCHEDULE_DELAY: '100',
    LOG_LEVEL: i.logLevel,
  };
}

export interface ApiStubEnvInput {
  port: number;
  dbPath: string;
  seedPath: string;
  hostedPipelineUrl: string;
  hostedPipelineKey: string;
  caFile: string;
  /** base64 of 32 random bytes: encrypts the self-host token at rest. */
  kek: string;
  logLevel: string;
  base: NodeJS.ProcessEnv;
}

export function apiStubEnv(i: ApiStubEnvInput): NodeJS.ProcessEnv {
  return {
    PATH: i.base.PATH,
    HOME: i.base.HOME,
    PORT: String(i.port),
    HOST: '127.0.0.1',
    PUBLIC_URL: `http://127.0.0.1:${i.port}`,
    API_STUB_DB: i.dbPath,
    API_STUB_SEED: i.seedPath,
    HOSTED_PIPELINE_URL: i.hostedPipelineUrl,
    HOSTED_PIPELINE_KEY: i.hostedPipelineKey,
    // Everything runs on loopback, which the egress guard refuses unless allowed.
    EGRESS_ALLOW_HOSTS: '127.0.0.1,localhost',
    PIPELINE_EXTRA_CA_FILE: i.caFile,
    PIPELINE_KEK: i.kek,
    WEBHOOK_POLL_INTERVAL_MS: '100',
    LOG_LEVEL: i.logLevel,
  };
}
