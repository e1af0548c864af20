/**
 * The workers' NetworkPolicy: the worker port (7860) stays open to every source, because the
 * Ingress controller, the service's connect calls and the respondents' media paths come from
 * wherever the cluster routes them; the management port (metrics and probes, 9090) only to the
 * scrapers' namespaces (the kubelet's probes are not subject to NetworkPolicy). Everything else
 * into the pods is refused. Egress is left alone: models, rooms and Redis live anywhere.
 */
import { METRICS_PORT, WORKER_PORT, type KubeObject, type VoiceWorkerPool } from '../types.ts';
import { childMetadata, selectorLabels } from './common.ts';
import type { BuildOptions } from './options.ts';

export function buildNetworkPolicy(pool: VoiceWorkerPool, options: BuildOptions): KubeObject | undefined {
  if (!options.networkPolicy) return undefined;
  const { metricsNamespaces } = options.networkPolicy;
  const ingress: unknown[] = [{ ports: [{ port: WORKER_PORT, protocol: 'TCP' }] }];
  if (metricsNamespaces.length > 0) {
    ingress.push({
      from: [
        {
          namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: [...metricsNamespaces] }] },
        },
      ],
      ports: [{ port: METRICS_PORT, protocol: 'TCP' }],
    });
  }
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: childMetadata(pool),
    spec: { podSelector: { matchLabels: selectorLabels(pool) }, policyTypes: ['Ingress'], ingress },
  };
}
