/**
 * The contract between the operator and the worker: for every room provider the worker accepts, the
 * environment the Deployment builder produces (Secrets and field references resolved the way the
 * kubelet would) passes the worker's own `loadConfig`, with the per-pool values C7 asks for.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import * as workerConfig from '../../worker/config.ts';
import { createMetrics as createWorkerMetrics } from '../../worker/telemetry/metrics.ts';
import type { VoiceWorkerPool } from '../types.ts';
import { buildDeployment } from './deployment.ts';
import { isLoaderEnv, LOADER_ENV, LOADER_ENV_PREFIXES, RESERVED_ENV, workerEnv, type EnvVar } from './env.ts';
import { BUSY_SESSIONS_METRIC } from './hpa.ts';

/**
 * The room providers of C3. worker/config.ts exports ROOM_PROVIDERS once the LiveKit work lands;
 * until then the worker's type accepts daily and local only, and the test follows the worker.
 */
const C3_PROVIDERS = ['daily', 'livekit', 'local'] as const;
const workerProviders: readonly string[] =
  (workerConfig as { ROOM_PROVIDERS?: readonly string[] }).ROOM_PROVIDERS ?? (['daily', 'local'] satisfies workerConfig.RoomProviderName[]);

/** The smallest pool the CRD admits for a provider (its CEL rules name what each needs). */
function minimalPool(provider: string, name = 'interviews', namespace = 'voice'): VoiceWorkerPool {
  return {
    apiVersion: 'voice.service.io/v1beta1',
    kind: 'VoiceWorkerPool',
    metadata: { name, namespace, uid: 'u1', generation: 1 },
    spec: {
      image: { repository: 'reg/worker', tag: 'v1.3.0' },
      replicas: 3,
      resources: { requests: { cpu: '2', memory: '4Gi' }, limits: { cpu: '4', memory: '8Gi' } },
      secrets: {
        workerToken: { name: 'worker', key: 'token' },
        openaiApiKey: { name: 'models', key: 'openai' },
        ...(provider === 'daily' ? { roomApiKey: { name: 'rooms', key: 'daily' } } : {}),
      },
      redis: { url: 'redis://redis:6379' },
      backendUrl: 'https://app.service.example',
      roomProvider: provider as VoiceWorkerPool['spec']['roomProvider'],
      ...(provider === 'livekit'
        ? { livekit: { url: 'wss://rooms.example.com', secretName: 'livekit', apiKeyKey: 'apiKey', apiSecretKey: 'apiSecret' } }
        : {}),
      ingress: { host: 'voice.example.com', tlsSecretName: 'voice-tls' },
      sizing: { p95ConcurrentSessions: 10, headroomPercent: 20, sessionsPerReplica: 4 },
      terminationGracePeriodSeconds: 1800,
    },
  };
}

/** What the kubelet hands the container: Secret values and the pod's name filled in. */
function resolve(env: EnvVar[]): Record<string, string> {
  return Object.fromEntries(
    env.map((e) => {
      if ('value' in e) return [e.name, e.value];
      if ('secretKeyRef' in e.valueFrom)
        return [e.name, `secret-${e.valueFrom.secretKeyRef.name}-${e.valueFrom.secretKeyRef.key}-0123456789`];
      return [e.name, 'interviews-7f9c-abcde'];
    }),
  );
}

describe('worker environment from the pool', () => {
  it('covers the providers of C3 in the CRD', () => {
    const crd = parse(readFileSync(new URL('../../crds/voice.service.io_voiceworkerpools.yaml', import.meta.url), 'utf8'));
    const enumeration = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.roomProvider.enum;
    expect(enumeration).toEqual([...C3_PROVIDERS]);
    for (const p of workerProviders) expect(C3_PROVIDERS).toContain(p);
  });

  for (const provider of workerProviders) {
    it(`passes the worker's loadConfig for room provider ${provider}`, () => {
      const env = resolve(workerEnv(minimalPool(provider)));
      const config = workerConfig.loadConfig(env);
      expect(config.roomProvider).toBe(provider);
      expect(config.publicUrl).toBe('https://voice.example.com');
      expect(config.redisKeyPrefix).toBe('voice:voice:interviews');
      expect(config.drainGraceSeconds).toBe(1780);
      expect(config.warmPoolSize).toBe(4); // sizing.sessionsPerReplica (C7)
      expect(config.podName).toBe('interviews-7f9c-abcde');
      expect(env.METRICS_PORT).toBe('9090');
    });
  }

  it('gives LiveKit its URL from the spec and key and secret from a Secret (C3)', () => {
    const env = workerEnv(minimalPool('livekit'));
    expect(env).toEqual(
      expect.arrayContaining([
        { name: 'ROOM_PROVIDER', value: 'livekit' },
        { name: 'LIVEKIT_URL', value: 'wss://rooms.example.com' },
        { name: 'LIVEKIT_API_KEY', valueFrom: { secretKeyRef: { name: 'livekit', key: 'apiKey' } } },
        { name: 'LIVEKIT_API_SECRET', valueFrom: { secretKeyRef: { name: 'livekit', key: 'apiSecret' } } },
      ]),
    );
    expect(env.find((e) => e.name === 'DAILY_API_KEY')).toBeUndefined();
  });

  it('gives two pools on one Redis different key prefixes', () => {
    const prefix = (name: string, ns: string) => resolve(workerEnv(minimalPool('local', name, ns))).REDIS_KEY_PREFIX;
    expect(new Set([prefix('a', 'x'), prefix('b', 'x'), prefix('a', 'y')]).size).toBe(3);
  });

  it('uses the public URL of the spec, else the endpoint, as PUBLIC_URL', () => {
    const p = minimalPool('local');
    delete p.spec.ingress;
    expect(resolve(workerEnv(p)).PUBLIC_URL).toBe('http://interviews.voice.svc:443');
    p.spec.publicUrl = 'https://rooms.example.com/';
    expect(resolve(workerEnv(p)).PUBLIC_URL).toBe('https://rooms.example.com');
  });

  it('reserves every name the builder can set, and the CRD refuses the same list', () => {
    const everything = minimalPool('livekit');
    everything.spec.podTLS = { secretName: 'tls' };
    everything.spec.maxSessionSeconds = 900;
    everything.spec.transcriptStore = 's3://bucket';
    everything.spec.redis = {
      username: 'voice',
      passwordSecret: { name: 'r', key: 'p' },
      tls: { enabled: true, caSecret: { name: 'r', key: 'ca' } },
      sentinel: { hosts: ['s0:26379'], username: 'sen', passwordSecret: { name: 'r', key: 's' }, tls: true },
    };
    everything.spec.telemetry = { otlpEndpoint: 'http://otel:4318', serviceName: 'v' };
    everything.spec.models = {
      llm: { baseUrl: 'http://l', model: 'm' },
      stt: { baseUrl: 'http://s', model: 'm' },
      tts: { baseUrl: 'http://t', model: 'm', voice: 'v' },
    };
    everything.spec.secrets = {
      ...everything.spec.secrets,
      llmApiKey: { name: 'm', key: 'l' },
      sttApiKey: { name: 'm', key: 's' },
      ttsApiKey: { name: 'm', key: 't' },
    };
    const daily = minimalPool('daily');
    const names = new Set([...workerEnv(everything), ...workerEnv(daily)].map((e) => e.name));
    expect([...names].sort()).toEqual([...RESERVED_ENV].sort());
    const crd = readFileSync(new URL('../../crds/voice.service.io_voiceworkerpools.yaml', import.meta.url), 'utf8');
    const rule = /rule: "!\(self\.name in \[([^\]]+)\]\)"/.exec(crd)?.[1];
    expect(
      rule
        ?.split(', ')
        .map((n) => n.replace(/'/g, ''))
        .sort(),
    ).toEqual([...RESERVED_ENV].sort());
  });

  it('reserves the loaders and start-up hooks, and the CRD refuses the same prefixes and names', () => {
    const crd = readFileSync(new URL('../../crds/voice.service.io_voiceworkerpools.yaml', import.meta.url), 'utf8');
    const rule = /rule: "!self\.name\.matches\('\^\(([^)]+)\)'\) && !\(self\.name in \[([^\]]+)\]\)"/.exec(crd);
    expect(rule?.[1]?.split('|')).toEqual([...LOADER_ENV_PREFIXES]);
    expect(rule?.[2]?.split(', ').map((n) => n.replace(/'/g, ''))).toEqual([...LOADER_ENV]);
    for (const name of [
      'NODE_OPTIONS',
      'LD_PRELOAD',
      'LD_LIBRARY_PATH',
      'LD_AUDIT',
      'PYTHONPATH',
      'PYTHONSTARTUP',
      'BASH_ENV',
      'OPENSSL_CONF',
      'PERL5OPT',
      'DAILY_BRIDGE_PYTHON',
    ])
      expect(isLoaderEnv(name), name).toBe(true);
    for (const name of ['AWS_ACCESS_KEY_ID', 'BOT_SESSIONS_PER_PROCESS', 'LOG_LEVEL', 'UV_THREADPOOL_SIZE', 'HTTPS_PROXY', 'MY_NODE'])
      expect(isLoaderEnv(name), name).toBe(false);
    // No name the builder sets falls under them: the two lists say different things.
    expect(RESERVED_ENV.filter(isLoaderEnv)).toEqual([]);
  });

  it('points the workers at Sentinel, with the ACL user, the passwords from Secrets and the mounted CA', () => {
    const p = minimalPool('livekit');
    p.spec.redis = {
      url: 'rediss://redis:6379/1',
      username: 'voice',
      passwordSecret: { name: 'redis-auth', key: 'password' },
      tls: { enabled: true, caSecret: { name: 'redis-ca', key: 'ca.pem' } },
      sentinel: {
        hosts: ['sentinel-0.redis:26379', 'sentinel-1.redis'],
        masterName: 'voice',
        passwordSecret: { name: 'redis-auth', key: 'sentinel' },
        tls: true,
      },
    };
    const env = workerEnv(p);
    expect(resolve(env)).toMatchObject({
      REDIS_URL: 'rediss://redis:6379/1',
      REDIS_USERNAME: 'voice',
      REDIS_TLS_CA_FILE: '/etc/voice-worker/redis-ca/ca.crt',
      REDIS_SENTINELS: 'sentinel-0.redis:26379,sentinel-1.redis',
      REDIS_SENTINEL_MASTER: 'voice',
      REDIS_SENTINEL_TLS: 'true',
    });
    expect(env).toContainEqual({ name: 'REDIS_PASSWORD', valueFrom: { secretKeyRef: { name: 'redis-auth', key: 'password' } } });
    expect(env).toContainEqual({ name: 'REDIS_SENTINEL_PASSWORD', valueFrom: { secretKeyRef: { name: 'redis-auth', key: 'sentinel' } } });
    // The worker reads exactly these: its own config accepts the result.
    const config = workerConfig.loadConfig(resolve(env));
    expect(config.redis.sentinel?.hosts).toEqual([
      { host: 'sentinel-0.redis', port: 26379 },
      { host: 'sentinel-1.redis', port: 26379 },
    ]);
    const deployment = buildDeployment(p, 1) as unknown as {
      spec: { template: { spec: { volumes: unknown[]; containers: Array<{ volumeMounts: unknown[] }> } } };
    };
    expect(deployment.spec.template.spec.volumes).toContainEqual({
      name: 'redis-ca',
      secret: { secretName: 'redis-ca', defaultMode: 0o440, items: [{ key: 'ca.pem', path: 'ca.crt' }] },
    });
    expect(deployment.spec.template.spec.containers[0]!.volumeMounts).toContainEqual({
      name: 'redis-ca',
      mountPath: '/etc/voice-worker/redis-ca',
      readOnly: true,
    });
  });

  it('gives a Sentinel pool without a URL only the scheme', () => {
    const p = minimalPool('livekit');
    p.spec.redis = { sentinel: { hosts: ['s0'] } };
    expect(resolve(workerEnv(p))).toMatchObject({
      REDIS_URL: 'redis://sentinel-master',
      REDIS_SENTINELS: 's0',
      REDIS_SENTINEL_MASTER: 'mymaster',
    });
    p.spec.redis.tls = { enabled: true };
    expect(resolve(workerEnv(p)).REDIS_URL).toBe('rediss://sentinel-master');
  });

  it('scales on the gauge the worker really exports', async () => {
    const metrics = await createWorkerMetrics({ defaultMetrics: false }).registry.getMetricsAsJSON();
    expect(metrics.map((m) => m.name)).toContain(BUSY_SESSIONS_METRIC);
  });
});
