/** Names, labels and owner references shared by every child of a pool. */
import { API_VERSION, KIND, MANAGED_BY, POOL_LABEL, type OwnerReference, type VoiceWorkerPool } from '../types.ts';

/** Selector labels: stable for the life of the pool (a Deployment's selector is immutable). */
export function selectorLabels(pool: VoiceWorkerPool): Record<string, string> {
  return { 'app.kubernetes.io/name': 'voice-worker', 'app.kubernetes.io/instance': pool.metadata.name, [POOL_LABEL]: pool.metadata.name };
}

export function childLabels(pool: VoiceWorkerPool): Record<string, string> {
  return { ...selectorLabels(pool), 'app.kubernetes.io/managed-by': MANAGED_BY, 'app.kubernetes.io/version': pool.spec.image.tag };
}

export function ownerReference(pool: VoiceWorkerPool): OwnerReference {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    name: pool.metadata.name,
    uid: pool.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** Every child has the pool's name, namespace, labels and one controller owner reference. */
export function childMetadata(pool: VoiceWorkerPool, annotations?: Record<string, string>) {
  return {
    name: pool.metadata.name,
    namespace: pool.metadata.namespace,
    labels: childLabels(pool),
    ...(annotations && Object.keys(annotations).length > 0 ? { annotations } : {}),
    ownerReferences: [ownerReference(pool)],
  };
}

/** The pool's explicit public address, if it has one. */
export const publicUrlOf = (pool: VoiceWorkerPool): string | undefined => pool.spec.publicUrl?.replace(/\/+$/, '');

/**
 * The address the service's connect routing calls: the ingress host (TLS terminates there), else
 * the pool's public URL, else the in-cluster Service, whose port 443 speaks plain HTTP unless the
 * pod serves TLS itself (spec.podTLS). An address that answers, never an https:// that would not.
 */
export function endpointOf(pool: VoiceWorkerPool): string {
  if (pool.spec.ingress) return `https://${pool.spec.ingress.host}/`;
  const explicit = publicUrlOf(pool);
  if (explicit) return `${explicit}/`;
  return `${pool.spec.podTLS ? 'https' : 'http'}://${pool.metadata.name}.${pool.metadata.namespace}.svc:443/`;
}
