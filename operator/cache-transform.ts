/**
 * What the informers keep of each object (client-go's SetTransform): only what the operator reads.
 * The operator's memory is bounded by its caches, and an object's managedFields and a kubectl
 * `last-applied-configuration` annotation can each be as large as its spec again.
 */
import type { KubeItem } from './watch.ts';

type Metadata = KubeItem['metadata'];
type ManagedFieldsEntry = { manager?: string; fieldsV1?: Record<string, unknown> };

const pick = (metadata: Metadata, keys: readonly string[]): Metadata => {
  const out: Metadata = { name: metadata.name };
  for (const k of keys) if (metadata[k] !== undefined) out[k] = metadata[k];
  return out;
};

/** A pool: its spec and status, and of its metadata what the reconcile reads (no annotations, no managedFields). */
export function trimPool(pool: KubeItem): KubeItem {
  return {
    apiVersion: pool.apiVersion,
    kind: pool.kind,
    metadata: pick(pool.metadata, ['namespace', 'uid', 'generation', 'resourceVersion', 'deletionTimestamp', 'labels']),
    spec: pool.spec,
    ...(pool.status !== undefined ? { status: pool.status } : {}),
  };
}

/**
 * A child: all but its managedFields, of which only who owns `spec.replicas` is kept (applyDeployment
 * reads it to know whether the first replica count was handed over), and no last-applied copy.
 */
export function trimChild(child: KubeItem): KubeItem {
  const { managedFields, annotations, ...metadata } = child.metadata as Metadata & {
    managedFields?: ManagedFieldsEntry[];
    annotations?: Record<string, string>;
  };
  const replicasOwners = (managedFields ?? [])
    .filter((m) => (m.fieldsV1?.['f:spec'] as Record<string, unknown> | undefined)?.['f:replicas'] !== undefined)
    .map((m) => ({ manager: m.manager, fieldsV1: { 'f:spec': { 'f:replicas': {} } } }));
  const kept =
    annotations && 'kubectl.kubernetes.io/last-applied-configuration' in annotations
      ? Object.fromEntries(Object.entries(annotations).filter(([k]) => k !== 'kubectl.kubernetes.io/last-applied-configuration'))
      : annotations;
  return {
    ...child,
    metadata: { ...metadata, ...(kept ? { annotations: kept } : {}), ...(replicasOwners.length ? { managedFields: replicasOwners } : {}) },
  };
}

/**
 * A pool's pod: who it is and its status (what pod-health.ts and pod-secrets.ts read), never its spec,
 * which holds the whole pod template (the pool's extraEnv among it) once per pod.
 */
export function trimPod(pod: KubeItem): KubeItem {
  const status = pod.status as Record<string, unknown> | undefined;
  return {
    apiVersion: pod.apiVersion,
    kind: pod.kind,
    metadata: pick(pod.metadata, ['namespace', 'uid', 'resourceVersion', 'deletionTimestamp', 'labels']),
    ...(status
      ? {
          status: {
            phase: status.phase,
            conditions: status.conditions,
            containerStatuses: status.containerStatuses,
            initContainerStatuses: status.initContainerStatuses,
          },
        }
      : {}),
  };
}
