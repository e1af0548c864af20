/** The worker Deployment of a pool. */
import { METRICS_PORT, WORKER_PORT, type KubeObject, type Placement, type VoiceWorkerPool } from '../types.ts';
import { childMetadata, selectorLabels } from './common.ts';
import { POD_TLS_DIR, PRE_STOP_SECONDS, REDIS_CA_DIR, REDIS_CA_KEY, workerEnv } from './env.ts';
import { DEFAULT_BUILD_OPTIONS, type BuildOptions } from './options.ts';

export { workerEnv } from './env.ts';

/** Where the worker keeps files (transcripts by default); writable although the root is read-only. */
export const WORKER_DATA_DIR = '/var/lib/voice-worker';

/**
 * Bounds of the pod's scratch space. Transcripts land in the data folder when a pool has no s3://
 * store, and /tmp takes the bots' temporary audio: both are memory-backed nowhere, so they count
 * against the node's disk, and an unbounded one could fill it. Beyond the bound the kubelet evicts
 * the pod (after its grace period) rather than the node running out.
 */
export const SCRATCH = { tmp: '1Gi', data: '4Gi', request: '1Gi', limit: '6Gi' } as const;

function resources(spec: VoiceWorkerPool['spec']) {
  const gpu =
    spec.resources.gpu && spec.resources.gpu.count > 0 ? { [spec.resources.gpu.resourceName]: String(spec.resources.gpu.count) } : {};
  return {
    requests: {
      cpu: String(spec.resources.requests.cpu),
      memory: spec.resources.requests.memory,
      'ephemeral-storage': SCRATCH.request,
      ...gpu,
    },
    limits: { cpu: String(spec.resources.limits.cpu), memory: spec.resources.limits.memory, 'ephemeral-storage': SCRATCH.limit, ...gpu },
  };
}

/** `repository:tag`, or `repository@digest` (with the tag kept readable before it) when pinned. */
export function imageOf(image: VoiceWorkerPool['spec']['image']): string {
  return image.digest ? `${image.repository}:${image.tag}@${image.digest}` : `${image.repository}:${image.tag}`;
}

export function podSecurityContext(options: BuildOptions): Record<string, unknown> {
  const ids =
    options.runAsUser === undefined ? {} : { runAsUser: options.runAsUser, runAsGroup: options.runAsUser, fsGroup: options.runAsUser };
  return { runAsNonRoot: true, ...ids, seccompProfile: { type: 'RuntimeDefault' } };
}

/** nodeSelector, tolerations, affinity, topology spread and priority class, passed through as given. */
export function placement(p: Placement = {}): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries({
      nodeSelector: p.nodeSelector,
      tolerations: p.tolerations,
      affinity: p.affinity,
      topologySpreadConstraints: p.topologySpreadConstraints,
      priorityClassName: p.priorityClassName,
    }).filter(([, v]) => v !== undefined),
  );
}

/**
 * Unless the pool gives its own, the workers spread over nodes and zones so that one node or zone
 * going away takes only its share of the live interviews. ScheduleAnyway: a preference the scheduler
 * weighs, never a reason to leave a pod pending (a single-node cluster still runs every worker).
 */
export function defaultSpread(pool: VoiceWorkerPool): Array<Record<string, unknown>> {
  return ['kubernetes.io/hostname', 'topology.kubernetes.io/zone'].map((topologyKey) => ({
    maxSkew: 1,
    topologyKey,
    whenUnsatisfiable: 'ScheduleAnyway',
    labelSelector: { matchLabels: selectorLabels(pool) },
  }));
}

/**
 * `replicas` is set only when no HPA owns the count (autoscaling off); leaving it out of the apply
 * means the operator never fights the HPA over it.
 */
export function buildDeployment(
  pool: VoiceWorkerPool,
  replicas: number | undefined,
  options: BuildOptions = DEFAULT_BUILD_OPTIONS,
): KubeObject {
  const { spec } = pool;
  // Probes use the plain-HTTP management port (C2), also when the pod serves TLS on 7860 (C4).
  const probe = (path: string, extra: Record<string, number>) => ({ httpGet: { path, port: 'metrics' }, ...extra });
  const tls = spec.podTLS;
  const redisCa = spec.redis.tls?.caSecret;
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
        // The common scrape annotations point at the management port (C2); the chart's PodMonitor does the same.
        metadata: {
          labels: childMetadata(pool).labels,
          annotations: { 'prometheus.io/scrape': 'true', 'prometheus.io/port': String(METRICS_PORT), 'prometheus.io/path': '/metrics' },
        },
        spec: {
          terminationGracePeriodSeconds: spec.terminationGracePeriodSeconds,
          enableServiceLinks: false,
          // The worker never calls the Kubernetes API: no token in the pod to steal.
          automountServiceAccountToken: false,
          securityContext: podSecurityContext(options),
          ...(spec.image.pullSecrets?.length ? { imagePullSecrets: spec.image.pullSecrets.map((name) => ({ name })) } : {}),
          ...placement(spec.placement),
          ...(spec.placement?.topologySpreadConstraints ? {} : { topologySpreadConstraints: defaultSpread(pool) }),
          containers: [
            {
              name: 'worker',
              image: imageOf(spec.image),
              imagePullPolicy: spec.image.pullPolicy ?? 'IfNotPresent',
              ports: [
                { name: 'http', containerPort: WORKER_PORT, protocol: 'TCP' },
                { name: 'metrics', containerPort: METRICS_PORT, protocol: 'TCP' },
              ],
              env: workerEnv(pool),
              resources: resources(spec),
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
                ...(tls ? [{ name: 'tls', mountPath: POD_TLS_DIR, readOnly: true }] : []),
                ...(redisCa ? [{ name: 'redis-ca', mountPath: REDIS_CA_DIR, readOnly: true }] : []),
              ],
            },
          ],
          volumes: [
            { name: 'tmp', emptyDir: { sizeLimit: SCRATCH.tmp } },
            { name: 'data', emptyDir: { sizeLimit: SCRATCH.data } },
            ...(tls ? [{ name: 'tls', secret: { secretName: tls.secretName, defaultMode: 0o440 } }] : []),
            ...(redisCa
              ? [
                  {
                    name: 'redis-ca',
                    secret: { secretName: redisCa.name, defaultMode: 0o440, items: [{ key: redisCa.key, path: REDIS_CA_KEY }] },
                  },
                ]
              : []),
          ],
        },
      },
    },
  };
}
