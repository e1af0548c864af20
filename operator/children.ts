/** Where each kind of child lives in the API, and how to tell whether the operator owns one. */
import type { ChildKind } from './resources/index.ts';
import { resourcePath, type ResourceRef } from './kube.ts';
import { GROUP, KIND, type OwnerReference } from './types.ts';

export const CHILD_RESOURCES: Record<ChildKind, Omit<ResourceRef, 'namespace' | 'name'>> = {
  Deployment: { group: 'apps', version: 'v1', plural: 'deployments' },
  Service: { group: '', version: 'v1', plural: 'services' },
  Ingress: { group: 'networking.k8s.io', version: 'v1', plural: 'ingresses' },
  HorizontalPodAutoscaler: { group: 'autoscaling', version: 'v2', plural: 'horizontalpodautoscalers' },
  PodDisruptionBudget: { group: 'policy', version: 'v1', plural: 'poddisruptionbudgets' },
  NetworkPolicy: { group: 'networking.k8s.io', version: 'v1', plural: 'networkpolicies' },
};

export function childPath(kind: ChildKind, namespace: string, name?: string): string {
  return resourcePath({ ...CHILD_RESOURCES[kind], namespace, ...(name ? { name } : {}) });
}

/** Whether an owner reference names a VoiceWorkerPool: its kind and its API group (any version). */
export const isPoolOwner = (o: OwnerReference): boolean => o.kind === KIND && o.apiVersion.split('/')[0] === GROUP;

/** The pool (namespace/name) that controls an object, if a VoiceWorkerPool does. */
export function controllingPool(object: { metadata: { namespace?: string; ownerReferences?: OwnerReference[] } }): string | undefined {
  const owner = object.metadata.ownerReferences?.find((o) => isPoolOwner(o) && o.controller);
  return owner && object.metadata.namespace ? `${object.metadata.namespace}/${owner.name}` : undefined;
}

/** Managers that own a field path in an object's managedFields (e.g. ['spec', 'replicas']). */
export function fieldOwners(
  managedFields: Array<{ manager?: string; fieldsV1?: Record<string, unknown> }> | undefined,
  path: string[],
): string[] {
  const owners: string[] = [];
  for (const entry of managedFields ?? []) {
    let node: unknown = entry.fieldsV1;
    for (const part of path) node = (node as Record<string, unknown> | undefined)?.[`f:${part}`];
    if (node !== undefined && entry.manager) owners.push(entry.manager);
  }
  return owners;
}

/**
 * What of a child may call for a reconcile: everything but its status and bookkeeping, plus, for
 * the Deployment only, the rollout counts that Ready and Progressing are computed from.
 */
export function childFingerprint(kind: ChildKind, child: { metadata: Record<string, unknown>; [k: string]: unknown }): string {
  const { labels, annotations, ownerReferences, deletionTimestamp, generation } = child.metadata;
  const rest = Object.fromEntries(Object.entries(child).filter(([k]) => k !== 'metadata' && k !== 'status'));
  const status = child.status as Record<string, unknown> | undefined;
  const rollout =
    kind === 'Deployment' && status
      ? [status.observedGeneration, status.replicas, status.updatedReplicas, status.readyReplicas, status.availableReplicas]
      : null;
  return JSON.stringify([labels, annotations, ownerReferences, deletionTimestamp, generation, rest, rollout]);
}
