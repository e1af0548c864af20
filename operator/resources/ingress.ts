/** The Ingress that terminates TLS for the pool's public host; none without `spec.ingress`. */
import { SERVICE_PORT, type KubeObject, type VoiceWorkerPool } from '../types.ts';
import { childMetadata } from './common.ts';

export function buildIngress(pool: VoiceWorkerPool): KubeObject | undefined {
  const ingress = pool.spec.ingress;
  if (!ingress) return undefined;
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: childMetadata(pool, ingress.annotations),
    spec: {
      ...(ingress.className ? { ingressClassName: ingress.className } : {}),
      tls: [{ hosts: [ingress.host], secretName: ingress.tlsSecretName }],
      rules: [
        {
          host: ingress.host,
          http: {
            paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: pool.metadata.name, port: { number: SERVICE_PORT } } } }],
          },
        },
      ],
    },
  };
}
