/**
 * The cluster-internal Service: port 443 to the worker's 7860. TLS terminates at the Ingress, so the
 * port is plain HTTP (`http`, appProtocol http) unless the pod serves TLS itself (spec.podTLS, C4).
 * The management port (metrics, probes) is never exposed here.
 */
import { SERVICE_PORT, type KubeObject, type VoiceWorkerPool } from '../types.ts';
import { childMetadata, selectorLabels } from './common.ts';

export function buildService(pool: VoiceWorkerPool): KubeObject {
  const scheme = pool.spec.podTLS ? 'https' : 'http';
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: childMetadata(pool),
    spec: {
      type: 'ClusterIP',
      selector: selectorLabels(pool),
      ports: [{ name: scheme, port: SERVICE_PORT, targetPort: 'http', protocol: 'TCP', appProtocol: scheme }],
    },
  };
}
