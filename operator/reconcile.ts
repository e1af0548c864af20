/**
 * One level-triggered pass over one VoiceWorkerPool: read it, check what the schema cannot, apply
 * every child with server-side apply, remove children the spec no longer wants, write status.
 * It trusts no event payload and returns done, requeue-after or error.
 *
 * RBAC this file needs (kept in sync with charts/voice-operator/templates/rbac.yaml):
 *   voiceworkerpools: get, list, watch; voiceworkerpools/status: patch; voiceworkerpools/finalizers: update
 *   deployments, services, ingresses, horizontalpodautoscalers, poddisruptionbudgets: get, list, watch, create, patch, delete
 *   secrets: get (only to check that referenced keys exist; values are never read into logs)
 *   events: create
 */
import type { Logger } from '../lib/log.ts';
import { childPath, fieldOwners } from './children.ts';
import { blockedConditions, ConditionType, findCondition, healthConditions, mergeConditions, Reason, type ConditionInput } from './conditions.ts';
import { recordEvent } from './events.ts';
import { isNotFound, KubeError, resourcePath, type KubeClient } from './kube.ts';
import { endpointOf } from './resources/common.ts';
import { desiredState, type ChildKind } from './resources/index.ts';
import { FIELD_MANAGER, GROUP, INITIAL_REPLICAS_MANAGER, PLURAL, VERSION, type KubeObject, type VoiceWorkerPool, type VoiceWorkerPoolStatus } from './types.ts';
import { secretProblem, secretRefs, specProblem, type Problem } from './validate.ts';

export type Outcome = { result: 'done' } | { result: 'requeue'; afterMs: number } | { result: 'error'; error: Error };

export interface ReconcileDeps {
  kube: KubeClient;
  log: Logger;
  now: () => Date;
  /** How soon a pool blocked by a missing Secret is looked at again (Secrets are not watched). */
  blockedRetryMs: number;
}

export const poolPath = (namespace: string, name?: string, subresource?: string): string =>
  resourcePath({ group: GROUP, version: VERSION, plural: PLURAL, namespace, ...(name ? { name } : {}), ...(subresource ? { subresource } : {}) });

interface DeploymentState {
  metadata: { managedFields?: Array<{ manager?: string; fieldsV1?: Record<string, unknown> }> };
  spec?: { replicas?: number };
  status?: { readyReplicas?: number; updatedReplicas?: number; replicas?: number };
}

export async function reconcile(deps: ReconcileDeps, key: string): Promise<Outcome> {
  const [namespace, name] = key.split('/') as [string, string];
  let pool: VoiceWorkerPool;
  try {
    pool = await deps.kube.get<VoiceWorkerPool>(poolPath(namespace, name));
  } catch (err) {
    if (isNotFound(err)) return { result: 'done' }; // deleted: owner references let the garbage collector remove the children
    return { result: 'error', error: err as Error };
  }
  if (pool.metadata.deletionTimestamp) return { result: 'done' };
  const now = deps.now();
  const desired = desiredState(pool, now);

  const invalid = specProblem(pool, desired.decision);
  if (invalid) {
    await block(deps, pool, invalid, desired.decision.floor);
    return { result: 'done' }; // terminal until the spec changes (a new generation triggers a reconcile)
  }
  const missing = secretProblem(pool, await readSecretKeys(deps.kube, pool));
  if (missing) {
    await block(deps, pool, missing, desired.decision.floor);
    return { result: 'requeue', afterMs: deps.blockedRetryMs };
  }

  let deployment: DeploymentState;
  try {
    deployment = await applyDeployment(deps.kube, pool, desired.apply[0]!, desired.autoscaled, desired.decision.floor);
    await Promise.all(desired.apply.slice(1).map((child) => deps.kube.apply(childPath(child.kind as ChildKind, namespace, name), child, FIELD_MANAGER)));
    await Promise.all(desired.absent.map((kind) => deleteIfOwned(deps.kube, kind, pool)));
  } catch (err) {
    const error = err as Error;
    // The API server refusing a child (400/422) is a spec no retry fixes; anything else is retried.
    if (err instanceof KubeError && (err.status === 422 || err.status === 400)) {
      await block(deps, pool, { reason: Reason.ApplyFailed, message: `VoiceWorkerPool ${name}: a child was rejected: ${error.message}` }, desired.decision.floor);
      return { result: 'done' };
    }
    return { result: 'error', error };
  }

  const wanted = deployment.spec?.replicas ?? desired.decision.floor;
  const conditions = healthConditions(name, deployment.status?.readyReplicas ?? 0, wanted, deployment.status?.updatedReplicas ?? 0);
  await writeStatus(deps, pool, conditions, {
    readyReplicas: deployment.status?.readyReplicas ?? 0,
    desiredFloor: desired.decision.floor,
    endpoint: endpointOf(pool),
    ...(desired.decision.windows.length ? { activeWindow: desired.decision.windows.join(',') } : {}),
  });
  const at = desired.decision.requeueAt;
  return at ? { result: 'requeue', afterMs: Math.max(1000, at.getTime() - now.getTime()) } : { result: 'done' };
}

/**
 * With an HPA the replica count is the HPA's: the operator's apply leaves it out. A new Deployment
 * gets the floor once, under a separate manager that never applies again, so dropping the field
 * from the operator's apply does not reset it to 1.
 */
async function applyDeployment(kube: KubeClient, pool: VoiceWorkerPool, deployment: KubeObject, autoscaled: boolean, floor: number): Promise<DeploymentState> {
  const path = childPath('Deployment', pool.metadata.namespace, pool.metadata.name);
  const handover = (replicas: number) =>
    kube.apply<DeploymentState>(path, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: pool.metadata.name, namespace: pool.metadata.namespace }, spec: { replicas } }, INITIAL_REPLICAS_MANAGER);
  if (autoscaled) {
    const existing = await kube.get<DeploymentState>(path).catch((err: unknown) => (isNotFound(err) ? undefined : Promise.reject(err)));
    if (existing && fieldOwners(existing.metadata.managedFields, ['spec', 'replicas']).every((m) => m === FIELD_MANAGER)) {
      await handover(Math.max(floor, existing.spec?.replicas ?? floor));
    }
    const applied = await kube.apply<DeploymentState>(path, deployment, FIELD_MANAGER);
    return existing ? applied : handover(floor);
  }
  return kube.apply<DeploymentState>(path, deployment, FIELD_MANAGER);
}

async function deleteIfOwned(kube: KubeClient, kind: ChildKind, pool: VoiceWorkerPool): Promise<void> {
  const path = childPath(kind, pool.metadata.namespace, pool.metadata.name);
  try {
    const child = await kube.get<KubeObject>(path);
    if (!child.metadata.ownerReferences?.some((o) => o.uid === pool.metadata.uid)) return; // someone else's object of the same name
    await kube.request('DELETE', path);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

/** Secret name to its data keys (undefined when the Secret does not exist). */
async function readSecretKeys(kube: KubeClient, pool: VoiceWorkerPool): Promise<Map<string, string[] | undefined>> {
  const names = [...new Set(secretRefs(pool).map((r) => r.ref.name))];
  const entries = await Promise.all(
    names.map(async (secret): Promise<[string, string[] | undefined]> => {
      try {
        const s = await kube.get<{ data?: Record<string, string> }>(resourcePath({ group: '', version: 'v1', plural: 'secrets', namespace: pool.metadata.namespace, name: secret }));
        return [secret, Object.keys(s.data ?? {})];
      } catch (err) {
        if (isNotFound(err)) return [secret, undefined];
        throw err;
      }
    }),
  );
  return new Map(entries);
}

async function block(deps: ReconcileDeps, pool: VoiceWorkerPool, problem: Problem, floor: number): Promise<void> {
  const before = findCondition(pool.status?.conditions, ConditionType.Degraded);
  const changed = !(before?.status === 'True' && before.reason === problem.reason && before.message === problem.message);
  deps.log.warn('pool cannot be satisfied', { pool: `${pool.metadata.namespace}/${pool.metadata.name}`, reason: problem.reason, message: problem.message });
  await writeStatus(deps, pool, blockedConditions(problem.reason, problem.message), { readyReplicas: pool.status?.readyReplicas ?? 0, desiredFloor: floor, endpoint: endpointOf(pool) });
  if (changed) await recordEvent(deps.kube, deps.log, pool, 'Warning', problem.reason, problem.message, deps.now());
}

/** Patches status only when something in it changed, so a status write never triggers a loop. */
async function writeStatus(deps: ReconcileDeps, pool: VoiceWorkerPool, conditions: ConditionInput[], fields: Omit<VoiceWorkerPoolStatus, 'conditions' | 'observedGeneration'>): Promise<void> {
  const generation = pool.metadata.generation ?? 0;
  const status: VoiceWorkerPoolStatus = {
    observedGeneration: generation,
    ...fields,
    conditions: mergeConditions(pool.status?.conditions, conditions, generation, deps.now()),
  };
  const old = pool.status ?? {};
  if (JSON.stringify(normalize(old)) === JSON.stringify(normalize(status))) return;
  // activeWindow: null removes a window that has ended (merge patch semantics).
  await deps.kube.mergePatch(poolPath(pool.metadata.namespace, pool.metadata.name, 'status'), { status: { activeWindow: null, ...status } });
}

function normalize(s: VoiceWorkerPoolStatus): unknown {
  // A fixed key order: the API server does not keep ours.
  return [
    s.observedGeneration, s.readyReplicas, s.desiredFloor, s.endpoint, s.activeWindow ?? null,
    (s.conditions ?? []).map((c) => [c.type, c.status, c.reason, c.message, c.observedGeneration]).sort(),
  ];
}
