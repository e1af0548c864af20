/**
 * A pool never adopts what it does not own. Server-side apply would take over any object of a
 * child's name (an admin's Service `payments`, a NetworkPolicy `default-deny`) and add the pool's
 * owner reference, so the garbage collector would delete it with the pool. Before applying, every
 * child's name is checked: absent, or controlled by this pool (by uid), or the pool is refused.
 */
import { childPath, isPoolOwner } from './children.ts';
import { Reason } from './conditions.ts';
import { isNotFound } from './kube.ts';
import type { ReconcileDeps } from './reconcile-deps.ts';
import type { ChildKind } from './resources/index.ts';
import type { KubeObject, VoiceWorkerPool } from './types.ts';
import type { Problem } from './validate.ts';

/** Whether `object` names `pool` as its controller (the owner reference the operator sets). */
export function controlledBy(object: KubeObject, pool: VoiceWorkerPool): boolean {
  return object.metadata.ownerReferences?.some((o) => o.controller === true && o.uid === pool.metadata.uid && isPoolOwner(o)) ?? false;
}

/**
 * The object of that kind and name as it is now: from the informer's cache (which holds only the
 * operator's labelled objects), else one GET, since a foreign object of that name is not cached.
 */
export async function currentChild(deps: ReconcileDeps, kind: ChildKind, namespace: string, name: string): Promise<KubeObject | undefined> {
  const cached = deps.cache?.child(kind, namespace, name);
  if (cached) return cached;
  try {
    return await deps.kube.get<KubeObject>(childPath(kind, namespace, name));
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** The first child whose name is taken by an object this pool does not control, as a NameConflict. */
export async function nameConflict(deps: ReconcileDeps, pool: VoiceWorkerPool, children: KubeObject[]): Promise<Problem | undefined> {
  const { namespace } = pool.metadata;
  const found = await Promise.all(children.map((c) => currentChild(deps, c.kind as ChildKind, namespace, c.metadata.name)));
  const index = found.findIndex((existing) => existing !== undefined && !controlledBy(existing, pool));
  if (index < 0) return undefined;
  const { kind, metadata } = children[index]!;
  const holder = found[index]!.metadata.ownerReferences?.find((o) => o.controller);
  return {
    reason: Reason.NameConflict,
    message:
      `VoiceWorkerPool ${pool.metadata.name} needs the ${kind} ${namespace}/${metadata.name}, but an object of that name exists that this ` +
      `pool does not control ` +
      `(${holder ? `its controller is ${holder.kind} ${holder.name}` : 'it has no controller'}); the operator leaves it untouched and ` +
      `applies nothing: rename the pool or remove that ${kind}`,
  };
}

/** The pool's own child of that kind and name, if it exists (else undefined, foreign objects included). */
export async function ownChild(deps: ReconcileDeps, pool: VoiceWorkerPool, kind: ChildKind, name: string): Promise<KubeObject | undefined> {
  const existing = await currentChild(deps, kind, pool.metadata.namespace, name);
  return existing && controlledBy(existing, pool) ? existing : undefined;
}
