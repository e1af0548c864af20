/** The cluster-internal Service: port 443 to the worker's 7860. */
import { SERVICE_PORT, type KubeObject, type VoiceWorkerPool } from '../types.ts';
import { childMetadata, selectorLabels } from './common.ts';

export function buildService(pool: VoiceWorkerPool): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: childMetadata(pool),
    spec: {
      type: 'ClusterIP',
      selector: selectorLabels(pool),
      ports: [{ name: 'https', port: SERVICE_PORT, targetPort: 'http', protocol: 'TCP' }],
    },
  };
}
