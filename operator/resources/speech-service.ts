/**
 * The speech server's Service (ClusterIP, its API port only), HPA (CPU), PodDisruptionBudget and, when the workers get a
 * NetworkPolicy, one that lets only this pool's workers reach the API (and the scrapers the metrics).
 */
import { SPEECH_METRICS_PORT, SPEECH_PORT, type KubeObject, type SelfHostedSpeech, type VoiceWorkerPool } from '../types.ts';
import { selectorLabels } from './common.ts';
import type { BuildOptions } from './options.ts';
import { speechMetadata, speechName, speechSelectorLabels } from './speech-common.ts';

export function buildSpeechService(pool: VoiceWorkerPool): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: speechMetadata(pool),
    spec: {
      type: 'ClusterIP',
      selector: speechSelectorLabels(pool),
      ports: [{ name: 'http', port: SPEECH_PORT, targetPort: 'http', protocol: 'TCP', appProtocol: 'http' }],
    },
  };
}

/** The autoscaling in force, or undefined when it is off. */
export const speechAutoscaling = (s: SelfHostedSpeech) => (s.autoscaling?.enabled === false ? undefined : s.autoscaling);

export function buildSpeechHpa(pool: VoiceWorkerPool, s: SelfHostedSpeech): KubeObject | undefined {
  const a = speechAutoscaling(s);
  if (!a) return undefined;
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: speechMetadata(pool),
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: speechName(pool) },
      minReplicas: a.minReplicas,
      maxReplicas: Math.max(a.minReplicas, a.maxReplicas),
      metrics: [
        {
          type: 'Resource',
          resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: a.targetCPUUtilizationPercentage } },
        },
      ],
    },
  };
}

/** Voluntary evictions take one speech server at a time; a pod that is not Ready may always go (as the workers' PDB). */
export function buildSpeechPdb(pool: VoiceWorkerPool): KubeObject {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: speechMetadata(pool),
    spec: { maxUnavailable: 1, unhealthyPodEvictionPolicy: 'AlwaysAllow', selector: { matchLabels: speechSelectorLabels(pool) } },
  };
}

export function buildSpeechNetworkPolicy(pool: VoiceWorkerPool, options: BuildOptions): KubeObject | undefined {
  if (!options.networkPolicy) return undefined;
  const { metricsNamespaces } = options.networkPolicy;
  const ingress: unknown[] = [
    { from: [{ podSelector: { matchLabels: selectorLabels(pool) } }], ports: [{ port: SPEECH_PORT, protocol: 'TCP' }] },
  ];
  if (metricsNamespaces.length > 0) {
    ingress.push({
      from: [
        {
          namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: [...metricsNamespaces] }] },
        },
      ],
      ports: [{ port: SPEECH_METRICS_PORT, protocol: 'TCP' }],
    });
  }
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: speechMetadata(pool),
    spec: { podSelector: { matchLabels: speechSelectorLabels(pool) }, policyTypes: ['Ingress'], ingress },
  };
}
