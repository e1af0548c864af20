/**
 * Condition types and reasons of a VoiceWorkerPool, and the pure merge that keeps
 * `lastTransitionTime` unless a condition's status really changed.
 */
import type { Condition } from './types.ts';

export const ConditionType = { Ready: 'Ready', Progressing: 'Progressing', Degraded: 'Degraded' } as const;

export const Reason = {
  /** Ready */
  ReplicasReady: 'ReplicasReady',
  ReplicasNotReady: 'ReplicasNotReady',
  /** Progressing */
  RollingOut: 'RollingOut',
  RolloutComplete: 'RolloutComplete',
  /** Degraded */
  AsExpected: 'AsExpected',
  SecretNotFound: 'SecretNotFound',
  SecretKeyNotFound: 'SecretKeyNotFound',
  InvalidSpec: 'InvalidSpec',
  ApplyFailed: 'ApplyFailed',
  /** Any of the three when the spec cannot be satisfied */
  Blocked: 'Blocked',
} as const;

export type ConditionInput = Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>;

/** New conditions for `generation`, keeping the transition time of those whose status is unchanged. */
export function mergeConditions(previous: Condition[] | undefined, next: ConditionInput[], generation: number, now: Date): Condition[] {
  return next.map((c) => {
    const old = previous?.find((p) => p.type === c.type);
    const lastTransitionTime = old && old.status === c.status ? old.lastTransitionTime : now.toISOString().replace(/\.\d{3}Z$/, 'Z');
    return { ...c, observedGeneration: generation, lastTransitionTime };
  });
}

export function findCondition(conditions: Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** What the three conditions say for a pool whose children were applied. */
export function healthConditions(name: string, ready: number, wanted: number, updated: number): ConditionInput[] {
  const allReady = wanted > 0 && ready >= wanted && updated >= wanted;
  return [
    allReady
      ? { type: ConditionType.Ready, status: 'True', reason: Reason.ReplicasReady, message: `${ready}/${wanted} workers of ${name} are ready` }
      : { type: ConditionType.Ready, status: 'False', reason: Reason.ReplicasNotReady, message: `${ready}/${wanted} workers of ${name} are ready` },
    allReady
      ? { type: ConditionType.Progressing, status: 'False', reason: Reason.RolloutComplete, message: `Deployment ${name} has ${updated} updated workers` }
      : { type: ConditionType.Progressing, status: 'True', reason: Reason.RollingOut, message: `Deployment ${name} is rolling out: ${updated}/${wanted} updated, ${ready} ready` },
    { type: ConditionType.Degraded, status: 'False', reason: Reason.AsExpected, message: `All children of ${name} are applied` },
  ];
}

/** What the three conditions say when the spec cannot be satisfied (reason and message name the cause). */
export function blockedConditions(reason: string, message: string): ConditionInput[] {
  return [
    { type: ConditionType.Ready, status: 'False', reason: Reason.Blocked, message },
    { type: ConditionType.Progressing, status: 'False', reason: Reason.Blocked, message },
    { type: ConditionType.Degraded, status: 'True', reason, message },
  ];
}
