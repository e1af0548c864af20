/**
 * What a reconcile writes about a pool: its status (only when something changed) and its Warning
 * Events (once per cause).
 */
import { mergeConditions, type ConditionInput } from './conditions.ts';
import { recordEvent } from './events.ts';
import type { FloorDecision } from './floor.ts';
import { resourcePath } from './kube.ts';
import type { ReconcileDeps } from './reconcile-deps.ts';
import { endpointOf } from './resources/common.ts';
import { FIELD_MANAGER, GROUP, PLURAL, VERSION, type VoiceWorkerPool, type VoiceWorkerPoolStatus } from './types.ts';

/** `serviceExists`: the pool's own Service is there; without it no address answers, and none is shown. */
export function statusFields(
  pool: VoiceWorkerPool,
  decision: FloorDecision,
  readyReplicas: number,
  serviceExists: boolean,
): Omit<VoiceWorkerPoolStatus, 'conditions' | 'observedGeneration'> {
  return {
    readyReplicas,
    desiredFloor: decision.floor,
    ...(serviceExists ? { endpoint: endpointOf(pool) } : {}),
    ...(decision.windows.length ? { activeWindow: decision.windows.join(',') } : {}),
    ...(decision.requeueAt ? { nextBoundary: decision.requeueAt.toISOString().replace(/\.\d{3}Z$/, 'Z') } : {}),
  };
}

/**
 * A Warning Event, once per pool and cause: the cached pool may not show the status just written
 * yet, so the last cause sent is also remembered here.
 */
export async function warn(deps: ReconcileDeps, pool: VoiceWorkerPool, reason: string, message: string): Promise<void> {
  const key = `${pool.metadata.uid}/${reason}`;
  if (deps.sentEvents?.get(key) === message) return;
  deps.sentEvents?.set(key, message);
  await recordEvent(deps.kube, deps.log, pool, 'Warning', reason, message, deps.now());
}

/** Patches status only when something in it changed, so a status write never triggers a loop. */
export async function writeStatus(
  deps: ReconcileDeps,
  pool: VoiceWorkerPool,
  conditions: ConditionInput[],
  fields: Omit<VoiceWorkerPoolStatus, 'conditions' | 'observedGeneration'>,
): Promise<void> {
  const generation = pool.metadata.generation ?? 0;
  const status: VoiceWorkerPoolStatus = {
    observedGeneration: generation,
    ...fields,
    conditions: mergeConditions(pool.status?.conditions, conditions, generation, deps.now()),
  };
  const old = pool.status ?? {};
  if (JSON.stringify(normalize(old)) === JSON.stringify(normalize(status))) return;
  // null removes a window that has ended, a boundary no longer ahead, or the endpoint of a Service
  // that is gone (merge patch semantics).
  await deps.kube.mergePatch(
    resourcePath({
      group: GROUP,
      version: VERSION,
      plural: PLURAL,
      namespace: pool.metadata.namespace,
      name: pool.metadata.name,
      subresource: 'status',
    }),
    { status: { activeWindow: null, nextBoundary: null, endpoint: null, ...status } },
    FIELD_MANAGER,
  );
}

function normalize(s: VoiceWorkerPoolStatus): unknown {
  // A fixed key order: the API server does not keep ours.
  return [
    s.observedGeneration,
    s.readyReplicas,
    s.desiredFloor,
    s.endpoint ?? null,
    s.activeWindow ?? null,
    s.nextBoundary ?? null,
    (s.conditions ?? []).map((c) => [c.type, c.status, c.reason, c.message, c.observedGeneration]).sort(),
  ];
}
