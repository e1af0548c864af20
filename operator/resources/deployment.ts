/** The worker Deployment of a pool. */
import { WORKER_PORT, type KubeObject, type SecretKeyRef, type VoiceWorkerPool } from '../types.ts';
import { childMetadata, selectorLabels } from './common.ts';

/** Seconds the pre-stop step waits so endpoints drop the pod before the worker gets SIGTERM. */
export const PRE_STOP_SECONDS = 10;

type EnvVar =
  | { name: string; value: string }
  | { name: string; valueFrom: { secretKeyRef: SecretKeyRef } }
  | { name: string; valueFrom: { fieldRef: { fieldPath: string } } };

/** Where the worker keeps files (transcripts by default); writable although the root is read-only. */
export const WORKER_DATA_DIR = '/var/lib/voice-worker';

function fromSecret(name: string, ref: SecretKeyRef | undefined): EnvVar[] {
  return ref ? [{ name, valueFrom: { secretKeyRef: { name: ref.name, key: ref.key } } }] : [];
}

function plain(name: string, value: string | number | undefined): EnvVar[] {
  return value === undefined || value === '' ? [] : [{ name, value: String(value) }];
}

/** Environment of the worker container; provider keys only ever come from Secrets. */
export function workerEnv(pool: VoiceWorkerPool): EnvVar[] {
  return [...managedEnv(pool), ...(pool.spec.extraEnv ?? []).map(extra)];
}

function extra(e: NonNullable<VoiceWorkerPool['spec']['extraEnv']>[number]): EnvVar {
  return e.valueFrom ? { name: e.name, valueFrom: { secretKeyRef: { name: e.valueFrom.secretKeyRef.name, key: e.valueFrom.secretKeyRef.key } } } : { name: e.name, value: e.value ?? '' };
}

/** The variables the operator owns (extraEnv may not set these). */
export function managedEnv(pool: VoiceWorkerPool): EnvVar[] {
  const { spec } = pool;
  const models = spec.models ?? {};
  return [
    ...plain('PORT', WORKER_PORT),
    { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    ...fromSecret('WORKER_TOKEN', spec.secrets.workerToken),
    ...(spec.redis.urlSecret ? fromSecret('REDIS_URL', spec.redis.urlSecret) : plain('REDIS_URL', spec.redis.url)),
    ...plain('BACKEND_URL', spec.backendUrl),
    ...plain('WARM_POOL_SIZE', spec.warmPoolSize),
    ...plain('ROOM_PROVIDER', spec.roomProvider),
    ...fromSecret('DAILY_API_KEY', spec.secrets.roomApiKey),
    ...fromSecret('LLM_API_KEY', spec.secrets.llmApiKey),
    ...fromSecret('STT_API_KEY', spec.secrets.sttApiKey),
    ...fromSecret('TTS_API_KEY', spec.secrets.ttsApiKey),
    ...fromSecret('OPENAI_API_KEY', spec.secrets.openaiApiKey),
    ...plain('LLM_BASE_URL', models.llm?.baseUrl),
    ...plain('LLM_MODEL', models.llm?.model),
    ...plain('STT_BASE_URL', models.stt?.baseUrl),
    ...plain('STT_MODEL', models.stt?.model),
    ...plain('TTS_BASE_URL', models.tts?.baseUrl),
    ...plain('TTS_MODEL', models.tts?.model),
    ...plain('TTS_VOICE', models.tts?.voice),
    ...plain('OTEL_EXPORTER_OTLP_ENDPOINT', spec.telemetry?.otlpEndpoint),
    ...plain('OTEL_SERVICE_NAME', spec.telemetry?.serviceName ?? 'voice-worker'),
    ...plain('MAX_SESSION_SECONDS', spec.maxSessionSeconds),
    ...plain('TRANSCRIPT_STORE', spec.transcriptStore),
  ];
}

/**
 * `replicas` is set only when no HPA owns the count (autoscaling off); leaving it out of the apply
 * means the operator never fights the HPA over it.
 */
export function buildDeployment(pool: VoiceWorkerPool, replicas: number | undefined): KubeObject {
  const { spec } = pool;
  const probe = (path: string, extra: Record<string, number>) => ({ httpGet: { path, port: 'http' }, ...extra });
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: childMetadata(pool),
    spec: {
      ...(replicas === undefined ? {} : { replicas }),
      selector: { matchLabels: selectorLabels(pool) },
      revisionHistoryLimit: 5,
      // Surge only: a rollout never takes a serving worker away before its replacement is ready.
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: '25%' } },
      template: {
        metadata: { labels: childMetadata(pool).labels },
        spec: {
          terminationGracePeriodSeconds: spec.terminationGracePeriodSeconds,
          enableServiceLinks: false,
          securityContext: { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000, seccompProfile: { type: 'RuntimeDefault' } },
          ...(spec.image.pullSecrets?.length ? { imagePullSecrets: spec.image.pullSecrets.map((name) => ({ name })) } : {}),
          containers: [
            {
              name: 'worker',
              image: `${spec.image.repository}:${spec.image.tag}`,
              imagePullPolicy: spec.image.pullPolicy ?? 'IfNotPresent',
              ports: [{ name: 'http', containerPort: WORKER_PORT, protocol: 'TCP' }],
              env: workerEnv(pool),
              resources: {
                requests: { cpu: String(spec.resources.requests.cpu), memory: spec.resources.requests.memory },
                limits: { cpu: String(spec.resources.limits.cpu), memory: spec.resources.limits.memory },
              },
              // Cold start is ~4 s warm and ~15 s with a pull: the startup probe allows 60 s.
              startupProbe: probe('/healthz', { periodSeconds: 2, failureThreshold: 30 }),
              livenessProbe: probe('/healthz', { periodSeconds: 10, failureThreshold: 3, timeoutSeconds: 2 }),
              readinessProbe: probe('/readyz', { periodSeconds: 5, failureThreshold: 2, timeoutSeconds: 2 }),
              lifecycle: { preStop: { exec: { command: ['/bin/sh', '-c', `sleep ${PRE_STOP_SECONDS}`] } } },
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                runAsNonRoot: true,
                capabilities: { drop: ['ALL'] },
              },
              volumeMounts: [
                { name: 'tmp', mountPath: '/tmp' },
                { name: 'data', mountPath: WORKER_DATA_DIR },
              ],
            },
          ],
          volumes: [
            { name: 'tmp', emptyDir: {} },
            { name: 'data', emptyDir: {} },
          ],
        },
      },
    },
  };
}
