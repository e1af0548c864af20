import { randomBytes } from 'node:crypto';
import type { ClusterInfo } from './cluster-script.ts';

/**
 * What the cluster tests install, as data (pure): the namespaces, the chart's values, the in-cluster
 * Redis and the worker's Secrets, and VoiceWorkerPool manifests.
 */
export const OPERATOR_NAMESPACE = 'voice-system';
export const POOL_NAMESPACE = 'voice-pools';
export const RELEASE = 'voice-operator';

const split = (image: string): { repository: string; tag: string } => {
  const at = image.lastIndexOf(':');
  return { repository: image.slice(0, at), tag: image.slice(at + 1) };
};

/** `registry/name:tag` as the chart's values take it (registry, repository, tag). */
const chartImage = (image: string): { registry: string; repository: string; tag: string } => {
  const { repository, tag } = split(image);
  const slash = repository.lastIndexOf('/');
  return { registry: repository.slice(0, slash), repository: repository.slice(slash + 1), tag };
};

/**
 * helm --set arguments: our operator image, never pulled (it was imported into containerd), and our
 * worker image as the default of pools without spec.image, in the form docs/install.md gives.
 */
export function chartSetArgs(cluster: ClusterInfo): string[] {
  const operator = chartImage(cluster.images.operator);
  const worker = chartImage(cluster.images.worker);
  const sets = [
    `image.registry=${operator.registry}`,
    `image.repository=${operator.repository}`,
    `image.tag=${operator.tag}`,
    'image.pullPolicy=Never',
    `workerImage.registry=${worker.registry}`,
    `workerImage.repository=${worker.repository}`,
    `workerImage.tag=${worker.tag}`,
    'leaderElection.leaseDurationSeconds=8',
    'leaderElection.renewDeadlineSeconds=5',
  ];
  return sets.flatMap((s) => ['--set', s]);
}

/** Redis from Debian's redis-server, one replica, with a Service. */
export function redisManifest(cluster: ClusterInfo): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'List',
    items: [
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'redis', namespace: POOL_NAMESPACE },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'redis' } },
          template: {
            metadata: { labels: { app: 'redis' } },
            spec: {
              containers: [
                {
                  name: 'redis',
                  image: cluster.images.redis,
                  imagePullPolicy: 'Never',
                  ports: [{ containerPort: 6379 }],
                  readinessProbe: { tcpSocket: { port: 6379 }, periodSeconds: 1 },
                },
              ],
            },
          },
        },
      },
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'redis', namespace: POOL_NAMESPACE },
        spec: { selector: { app: 'redis' }, ports: [{ port: 6379, targetPort: 6379 }] },
      },
    ],
  });
}

export function workerSecretsManifest(workerToken: string = randomBytes(24).toString('base64url')): string {
  const secret = (name: string, data: Record<string, string>) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: POOL_NAMESPACE },
    stringData: data,
  });
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'List',
    items: [
      secret('worker', { token: workerToken }),
      secret('providers', { llm: 'sk-local-standin-000000', stt: 'sk-local-standin-000000', tts: 'sk-local-standin-000000' }),
    ],
  });
}

export interface PoolOptions {
  name: string;
  replicas?: number;
  backendUrl: string;
  /** Extra spec fields (autoscaling, podTLS, env, ...). */
  spec?: Record<string, unknown>;
}

export function poolManifest(cluster: ClusterInfo, o: PoolOptions): string {
  const { repository, tag } = split(cluster.images.worker);
  return JSON.stringify({
    apiVersion: 'voice.service.io/v1beta1',
    kind: 'VoiceWorkerPool',
    metadata: { name: o.name, namespace: POOL_NAMESPACE },
    spec: {
      image: { repository, tag, pullPolicy: 'Never' },
      replicas: o.replicas ?? 1,
      resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '1', memory: '768Mi' } },
      secrets: {
        workerToken: { name: 'worker' },
        llmApiKey: { name: 'providers', key: 'llm' },
        sttApiKey: { name: 'providers', key: 'stt' },
        ttsApiKey: { name: 'providers', key: 'tts' },
      },
      redis: { url: `redis://redis.${POOL_NAMESPACE}.svc:6379` },
      backendUrl: o.backendUrl,
      roomProvider: 'local',
      terminationGracePeriodSeconds: 30,
      ...o.spec,
    },
  });
}
