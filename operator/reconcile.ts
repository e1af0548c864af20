/**
 * One level-triggered pass over one VoiceWorkerPool: read it, check what the schema cannot, apply
 * every child with server-side apply, remove children the spec no longer wants, write status.
 * It trusts no event payload and returns done, requeue-after or error.
 *
 * RBAC this file needs (kept in sync with charts/voice-operator/templates/rbac.yaml):
 *   voiceworkerpools: get, list, watch; voiceworkerpools/status: patch; voiceworkerpools/finalizers: update
 *   deployments, services, ingresses, horizontalpodautoscalers, poddisruptionbudgets: get, list, watch, create, patch, delete
 *   networkpolicies: get, list, watch, create, patch, delete (when the workers get one)
 *   secrets: get (only to check that referenced keys exist; values are never read into logs), only in
 *     the namespaces configured as readable (SECRET_NAMESPACES): never asked elsewhere
 *   pods: list, watch, only when READ_POD_STATUS is on (why the pool's pods do not run: pod-health.ts)
 *   events: create
 *   tokenreviews, subjectaccessreviews: create (metrics-auth.ts: who may read /metrics)
 */
import { childPath, fieldOwners } from './children.ts';
import {
  blockedConditions,
  ConditionType,
  findCondition,
  healthConditions,
  Reason,
  speechCondition,
  transcriptCondition,
  withPodProblem,
} from './conditions.ts';
import { decideFloor, type FloorDecision } from './floor.ts';
import { NormalReason, sendLifecycleEvents } from './lifecycle-events.ts';
import { isConflict, isNotFound, KubeError, resourcePath } from './kube.ts';
import { controlledBy, nameConflict, ownChild } from './ownership.ts';
import { podProblem } from './pod-health.ts';
import { listPoolPods } from './pod-informer.ts';
import type { Result } from './runtime/controller.ts';
import type { ReconcileDeps } from './reconcile-deps.ts';
import { desiredState, type ChildKind, type ChildRef } from './resources/index.ts';
import { DEFAULT_BUILD_OPTIONS, withWorkerImage } from './resources/options.ts';
import { statusFields, warn, writeStatus } from './status.ts';
import { FIELD_MANAGER, GROUP, INITIAL_REPLICAS_MANAGER, PLURAL, VERSION, type KubeObject, type VoiceWorkerPool } from './types.ts';
import { secretProblem, secretRefs, specProblem, type Problem } from './validate.ts';

/** The runtime's result: `blocked` names why a pool cannot be satisfied (a terminal error: counted as one, not retried). */
export type Outcome = Result;

// The deps live in their own file so that status.ts can take them without importing this one.
export type { ReconcileDeps } from './reconcile-deps.ts';

export const poolPath = (namespace: string, name?: string, subresource?: string): string =>
  resourcePath({
    group: GROUP,
    version: VERSION,
    plural: PLURAL,
    namespace,
    ...(name ? { name } : {}),
    ...(subresource ? { subresource } : {}),
  });

interface DeploymentState {
  metadata: { generation?: number; managedFields?: Array<{ manager?: string; fieldsV1?: Record<string, unknown> }> };
  spec?: { replicas?: number };
  status?: { observedGeneration?: number; readyReplicas?: number; updatedReplicas?: number; replicas?: number; availableReplicas?: number };
}

/** Requeue at the next window boundary (start - lead, or end) if one is ahead; else done. */
function atNextBoundary(at: Date | undefined, now: Date, cap?: number): { result: 'done' } | { result: 'requeue'; afterMs: number } {
  if (!at) return cap === undefined ? { result: 'done' } : { result: 'requeue', afterMs: cap };
  const ms = Math.max(1000, at.getTime() - now.getTime());
  return { result: 'requeue', afterMs: cap === undefined ? ms : Math.min(ms, cap) };
}

async function readPool(deps: ReconcileDeps, namespace: string, name: string): Promise<VoiceWorkerPool | undefined> {
  if (deps.cache) return deps.cache.pool(namespace, name);
  try {
    return await deps.kube.get<VoiceWorkerPool>(poolPath(namespace, name));
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export async function reconcile(deps: ReconcileDeps, key: string): Promise<Outcome> {
  const [namespace, name] = key.split('/') as [string, string];
  let pool: VoiceWorkerPool | undefined;
  try {
    pool = await readPool(deps, namespace, name);
  } catch (err) {
    return { result: 'error', error: err as Error };
  }
  // Deleted: owner references let the garbage collector remove the children.
  if (!pool || pool.metadata.deletionTimestamp) return { result: 'done' };
  const now = deps.now();
  // A pool that names no image runs the operator's default (chart: workerImage); none: refused, not pulled.
  const imaged = withWorkerImage(pool, deps.buildOptions ?? DEFAULT_BUILD_OPTIONS);
  if (!imaged) {
    const decision = decideFloor(pool.spec, now);
    await block(
      deps,
      pool,
      {
        reason: Reason.InvalidSpec,
        message: `VoiceWorkerPool ${name}: spec.image is not set and the operator has no default worker image (chart: image.registry, docs/install.md)`,
      },
      decision,
    );
    return { ...atNextBoundary(decision.requeueAt, now), blocked: Reason.InvalidSpec };
  }
  pool = imaged;
  const desired = desiredState(pool, now, deps.buildOptions);

  const invalid = specProblem(pool, desired.decision);
  // Blocked pools still come back at the next window edge: a window ending may unblock them.
  if (invalid) {
    await block(deps, pool, invalid, desired.decision);
    return { ...atNextBoundary(desired.decision.requeueAt, now), blocked: invalid.reason }; // otherwise terminal until the spec changes
  }
  const secretKeys = await readSecretKeys(deps, pool);
  const missing = secretProblem(pool, secretKeys);
  if (missing) {
    await block(deps, pool, missing, desired.decision);
    return { ...atNextBoundary(desired.decision.requeueAt, now, deps.blockedRetryMs), blocked: missing.reason };
  }

  // Never adopt: a name taken by an object the pool does not control blocks the pool (touching nothing).
  const conflict = await nameConflict(deps, pool, desired.apply).catch((err: unknown) => err as Error);
  if (conflict instanceof Error) return { result: 'error', error: conflict };
  if (conflict) {
    await block(deps, pool, conflict, desired.decision);
    // Foreign objects are not watched: look again like for a missing Secret.
    return { ...atNextBoundary(desired.decision.requeueAt, now, deps.blockedRetryMs), blocked: conflict.reason };
  }

  let deployment: DeploymentState;
  let speech: DeploymentState | undefined;
  try {
    const workers = desired.apply.find((child) => child.kind === 'Deployment' && child.metadata.name === name)!;
    deployment = await applyDeployment(deps, pool, workers, desired.autoscaled, desired.decision.floor);
    const others = desired.apply.filter((child) => child !== workers && child !== desired.speech?.deployment);
    await Promise.all(
      others.map((child) => deps.kube.apply(childPath(child.kind as ChildKind, namespace, child.metadata.name), child, FIELD_MANAGER)),
    );
    if (desired.speech)
      speech = await applyDeployment(deps, pool, desired.speech.deployment, desired.speech.autoscaled, desired.speech.floor);
    await Promise.all(desired.absent.map((child) => deleteIfOwned(deps, child, pool)));
  } catch (err) {
    const error = err as Error;
    // The API server refusing a child (400, 422, a 500 that names a bad field) is a spec no retry
    // fixes. Anything else is retried with backoff; the pool says why meanwhile.
    if (rejectedChild(err)) {
      await block(
        deps,
        pool,
        { reason: Reason.ApplyFailed, message: `VoiceWorkerPool ${name}: a child was rejected: ${error.message}` },
        desired.decision,
      );
      return { ...atNextBoundary(desired.decision.requeueAt, now), blocked: Reason.ApplyFailed };
    }
    if (err instanceof KubeError && err.status >= 500) {
      await block(
        deps,
        pool,
        { reason: Reason.ApplyFailed, message: `VoiceWorkerPool ${name}: applying a child failed (retrying): ${error.message}` },
        desired.decision,
      ).catch(() => undefined);
    }
    return { result: 'error', error };
  }

  const st = deployment.status ?? {};
  const rollout = {
    generation: deployment.metadata.generation ?? 0,
    observedGeneration: st.observedGeneration ?? 0,
    replicas: deployment.spec?.replicas ?? desired.decision.floor,
    statusReplicas: st.replicas ?? 0,
    updated: st.updatedReplicas ?? 0,
    available: st.availableReplicas ?? 0,
    ready: st.readyReplicas ?? 0,
  };
  const transcripts = transcriptCondition(name, pool.spec.transcriptStore);
  const before = findCondition(pool.status?.conditions, ConditionType.TranscriptsDurable);
  // Why pods do not run (a missing Secret it may not read, an image, a crash loop, no node) comes
  // from the pods' status, read while the rollout is incomplete or the speech server unavailable: a
  // complete rollout has pods that run. The pod informer calls for a pass when a pod's state changes;
  // without it (no cache) the pods are listed, and looked at again soon for Secrets it may not read.
  const unchecked = [...secretKeys.values()].some((keys) => keys === null);
  const podsReadable = deps.readPodStatus !== false;
  const settled =
    rollout.observedGeneration >= rollout.generation && rollout.ready >= rollout.replicas && rollout.updated >= rollout.replicas;
  const speechReady = desired.speech
    ? speechCondition(desired.speech.deployment.metadata.name, speech?.status?.availableReplicas ?? 0)
    : undefined;
  const lookAtPods = podsReadable && (!settled || speechReady?.status === 'False');
  const pods = lookAtPods ? (deps.cache?.pods ? deps.cache.pods(namespace, name) : await listPoolPods(deps.kube, pool)) : undefined;
  const fromPods = pods ? podProblem(pool, pods) : undefined;
  const health = withPodProblem(
    healthConditions(name, rollout, desired.decision.floor).map((c) =>
      c.type === ConditionType.Ready && c.status === 'True' && speechReady?.status === 'False'
        ? { ...c, status: 'False' as const, reason: Reason.SpeechNotReady, message: speechReady.message }
        : c,
    ),
    fromPods,
  );
  const speechConditions = speechReady ? withPodProblem([speechReady], fromPods?.speech ? fromPods : undefined) : [];
  const degradedBefore = findCondition(pool.status?.conditions, ConditionType.Degraded);
  await writeStatus(deps, pool, [...health, transcripts, ...speechConditions], statusFields(pool, desired.decision, rollout.ready, true));
  await sendLifecycleEvents(deps, pool, health, desired.decision.floor, desired.decision.windows);
  // Causes that cleared may warn again if they come back (lifecycle events keep their own memory).
  const still = new Set([transcripts.status === 'False' ? transcripts.reason : '', fromPods?.reason ?? '', ...Object.values(NormalReason)]);
  for (const key of [...(deps.sentEvents?.keys() ?? [])])
    if (key.startsWith(`${pool.metadata.uid}/`) && !still.has(key.slice(pool.metadata.uid.length + 1))) deps.sentEvents?.delete(key);
  if (transcripts.status === 'False' && before?.status !== 'False') await warn(deps, pool, transcripts.reason, transcripts.message);
  if (fromPods && degradedBefore?.message !== fromPods.message) await warn(deps, pool, fromPods.reason, fromPods.message);
  return atNextBoundary(
    desired.decision.requeueAt,
    now,
    unchecked && podsReadable && !settled && !deps.cache?.pods ? deps.blockedRetryMs : undefined,
  );
}

/**
 * Server-side apply answers some refusals of the object itself with 500 (a pass-through field of
 * the wrong type cannot be made a typed patch): a 500 that says so and names the field
 * (`... Kind=Deployment): .spec.template.spec.affinity.nodeAffinity: expected map`) is the spec's
 * fault, not the server's, and terminal like a 422. Any other 500, whatever its text, is retried.
 */
const SPEC_500 = /failed to create typed patch object \([^)]*\): \.[^\s:]+: /;

/** 400, 422, and a 500 that is a bad spec: the API server refuses the object itself; retrying cannot help. */
function rejectedChild(err: unknown): boolean {
  return err instanceof KubeError && (err.status === 400 || err.status === 422 || (err.status === 500 && SPEC_500.test(err.message)));
}

/**
 * With an HPA the replica count is the HPA's: the operator's apply leaves it out. A new Deployment
 * gets the floor once, under a separate manager that never applies again, so dropping the field
 * from the operator's apply does not reset it to 1.
 */
async function applyDeployment(
  deps: ReconcileDeps,
  pool: VoiceWorkerPool,
  deployment: KubeObject,
  autoscaled: boolean,
  floor: number,
): Promise<DeploymentState> {
  const { kube } = deps;
  const { name } = deployment.metadata; // the workers' (the pool's name) or the speech server's
  const path = childPath('Deployment', pool.metadata.namespace, name);
  const handover = (replicas: number) =>
    kube.apply<DeploymentState>(
      path,
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: pool.metadata.namespace }, spec: { replicas } },
      INITIAL_REPLICAS_MANAGER,
    );
  if (autoscaled) {
    // The cache answers when it has the Deployment; a miss is confirmed with a GET, because handing
    // the floor over again to an existing Deployment would undo the HPA's count.
    const cached = deps.cache?.child('Deployment', pool.metadata.namespace, name) as DeploymentState | undefined;
    const existing =
      cached ?? (await kube.get<DeploymentState>(path).catch((err: unknown) => (isNotFound(err) ? undefined : Promise.reject(err))));
    if (existing && fieldOwners(existing.metadata.managedFields, ['spec', 'replicas']).every((m) => m === FIELD_MANAGER)) {
      await handover(Math.max(floor, existing.spec?.replicas ?? floor));
    }
    const applied = await kube.apply<DeploymentState>(path, deployment, FIELD_MANAGER);
    return existing ? applied : handover(floor);
  }
  return kube.apply<DeploymentState>(path, deployment, FIELD_MANAGER);
}

async function deleteIfOwned(deps: ReconcileDeps, { kind, name }: ChildRef, pool: VoiceWorkerPool): Promise<void> {
  const path = childPath(kind, pool.metadata.namespace, name);
  try {
    // With caches, a child the informer never saw is not there (or not the operator's: no label).
    const child = deps.cache
      ? deps.cache.child(kind, pool.metadata.namespace, name)
      : await deps.kube.get<KubeObject>(path).catch((err: unknown) => (isNotFound(err) ? undefined : Promise.reject(err)));
    if (!child || !controlledBy(child, pool)) return; // someone else's object of the same name
    // The uid precondition: an object recreated under that name since the cache saw it is not ours.
    await deps.kube.request('DELETE', path, {
      body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: child.metadata.uid } },
    });
  } catch (err) {
    if (!isNotFound(err) && !isConflict(err)) throw err;
  }
}

/**
 * Secret name to its data keys (undefined when the Secret does not exist, null when the operator
 * may not read Secrets there: its RBAC is scoped to the watched namespaces, see docs/operator.md).
 */
async function readSecretKeys(deps: ReconcileDeps, pool: VoiceWorkerPool): Promise<Map<string, string[] | undefined | null>> {
  const { kube } = deps;
  const names = [...new Set(secretRefs(pool).map((r) => r.ref.name))];
  // Where its RBAC grants no Secret reads, asking would only collect a 403 per Secret per pass.
  if (deps.secretNamespaces && !deps.secretNamespaces.includes(pool.metadata.namespace)) return new Map(names.map((n) => [n, null]));
  const entries = await Promise.all(
    names.map(async (secret): Promise<[string, string[] | undefined | null]> => {
      try {
        const s = await kube.get<{ data?: Record<string, string> }>(
          resourcePath({ group: '', version: 'v1', plural: 'secrets', namespace: pool.metadata.namespace, name: secret }),
        );
        return [secret, Object.keys(s.data ?? {})];
      } catch (err) {
        if (isNotFound(err)) return [secret, undefined];
        if (err instanceof KubeError && err.status === 403) return [secret, null];
        throw err;
      }
    }),
  );
  return new Map(entries);
}

async function block(deps: ReconcileDeps, pool: VoiceWorkerPool, problem: Problem, decision: FloorDecision): Promise<void> {
  const before = findCondition(pool.status?.conditions, ConditionType.Degraded);
  const changed = !(before?.status === 'True' && before.reason === problem.reason && before.message === problem.message);
  deps.log.warn('pool cannot be satisfied', {
    pool: `${pool.metadata.namespace}/${pool.metadata.name}`,
    reason: problem.reason,
    message: problem.message,
  });
  const conditions = [
    ...blockedConditions(problem.reason, problem.message),
    transcriptCondition(pool.metadata.name, pool.spec.transcriptStore),
  ];
  const service = await ownChild(deps, pool, 'Service', pool.metadata.name).catch(() => undefined);
  await writeStatus(deps, pool, conditions, statusFields(pool, decision, pool.status?.readyReplicas ?? 0, service !== undefined));
  if (changed) await warn(deps, pool, problem.reason, problem.message);
}
