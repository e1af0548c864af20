/**
 * Normal Events for what a pool's owner wants to see happen in `kubectl describe vwp` (the Warning
 * ones say what is wrong): a new generation of the spec applied, the floor moved, the pool Ready.
 * Each is sent on the transition only, read from the status before this pass wrote it.
 */
import { ConditionType, findCondition, type ConditionInput } from './conditions.ts';
import type { Logger } from '../lib/log.ts';
import { recordEvent } from './events.ts';
import type { KubeClient } from './kube.ts';
import type { VoiceWorkerPool } from './types.ts';

/** What sending needs (a subset of the reconcile's dependencies; no import of reconcile.ts). */
export interface EventDeps {
  kube: KubeClient;
  log: Logger;
  now: () => Date;
  sentEvents?: Map<string, string>;
}

export const NormalReason = { SpecApplied: 'SpecApplied', FloorChanged: 'FloorChanged', Ready: 'Ready' } as const;

/** The Normal Events this pass calls for, in order. Pure. */
export function lifecycleEvents(
  pool: VoiceWorkerPool,
  conditions: ConditionInput[],
  floor: number,
  windows: string[],
): Array<{ reason: string; message: string }> {
  const name = pool.metadata.name;
  const generation = pool.metadata.generation ?? 0;
  const out: Array<{ reason: string; message: string }> = [];
  if (pool.status?.observedGeneration !== generation)
    out.push({
      reason: NormalReason.SpecApplied,
      message: `Generation ${generation} of VoiceWorkerPool ${name} is applied to its children`,
    });
  const before = pool.status?.desiredFloor;
  if (before !== undefined && before !== floor) {
    const why = windows.length ? ` (pre-scaling window ${windows.join(', ')})` : '';
    out.push({ reason: NormalReason.FloorChanged, message: `The replica floor of ${name} moved from ${before} to ${floor}${why}` });
  }
  const ready = conditions.find((c) => c.type === ConditionType.Ready);
  if (ready?.status === 'True' && findCondition(pool.status?.conditions, ConditionType.Ready)?.status !== 'True')
    out.push({ reason: NormalReason.Ready, message: ready.message });
  return out;
}

/**
 * Sends them, each once: the cached pool may not show the status just written yet, so what was sent
 * is remembered too (an Event is a courtesy: recordEvent logs a failure and carries on).
 */
export async function sendLifecycleEvents(
  deps: EventDeps,
  pool: VoiceWorkerPool,
  conditions: ConditionInput[],
  floor: number,
  windows: string[],
): Promise<void> {
  for (const e of lifecycleEvents(pool, conditions, floor, windows)) {
    const key = `${pool.metadata.uid}/${e.reason}`;
    if (deps.sentEvents?.get(key) === e.message) continue;
    deps.sentEvents?.set(key, e.message);
    await recordEvent(deps.kube, deps.log, pool, 'Normal', e.reason, e.message, deps.now());
  }
}
