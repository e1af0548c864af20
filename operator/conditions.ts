/**
 * Condition types and reasons of a VoiceWorkerPool, and the pure merge that keeps
 * `lastTransitionTime` unless a condition's status really changed.
 */
import type { Condition } from './types.ts';

export const ConditionType = {
  Ready: 'Ready',
  Progressing: 'Progressing',
  Degraded: 'Degraded',
  TranscriptsDurable: 'TranscriptsDurable',
  SpeechReady: 'SpeechReady',
} as const;

export const Reason = {
  /** Ready */
  ReplicasReady: 'ReplicasReady',
  ReplicasNotReady: 'ReplicasNotReady',
  ScaledToZero: 'ScaledToZero',
  /** Progressing */
  RollingOut: 'RollingOut',
  RolloutComplete: 'RolloutComplete',
  /** Degraded */
  AsExpected: 'AsExpected',
  SecretNotFound: 'SecretNotFound',
  SecretKeyNotFound: 'SecretKeyNotFound',
  InvalidSpec: 'InvalidSpec',
  ApplyFailed: 'ApplyFailed',
  /** A child's name is taken by an object the pool does not control (the operator leaves it alone). */
  NameConflict: 'NameConflict',
  /** From the pods of the workers or of the speech server (also the reason of Ready while it is False). */
  ImagePullError: 'ImagePullError',
  Unschedulable: 'Unschedulable',
  CrashLoopBackOff: 'CrashLoopBackOff',
  /** The reconcile itself threw (a bug, or a spec it could not handle): retried with backoff. */
  ReconcileFailed: 'ReconcileFailed',
  /** The reconcile overran RECONCILE_TIMEOUT_SECONDS: cut off and retried with backoff. */
  ReconcileTimedOut: 'ReconcileTimedOut',
  /** TranscriptsDurable */
  ObjectStore: 'ObjectStore',
  EphemeralTranscriptStore: 'EphemeralTranscriptStore',
  /** SpeechReady (and Ready while the pool's own speech server is not available) */
  SpeechAvailable: 'SpeechAvailable',
  SpeechNotReady: 'SpeechNotReady',
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

/** What the Deployment reports, as `kubectl rollout status` reads it. */
export interface RolloutState {
  generation: number;
  observedGeneration: number;
  /** spec.replicas (what the Deployment wants now, the HPA's count included). */
  replicas: number;
  statusReplicas: number;
  updated: number;
  available: number;
  ready: number;
}

/** The rollout is done when the controller saw the latest spec and every pod is updated and available. */
export function rolloutComplete(d: RolloutState): boolean {
  return d.observedGeneration >= d.generation && d.updated === d.replicas && d.statusReplicas === d.updated && d.available === d.updated;
}

/**
 * What the conditions say for a pool whose children were applied. Ready compares available workers
 * with the floor (so an HPA scale-up above the floor does not flip it), a pool scaled to zero is
 * Ready with its own reason, and Progressing follows the rollout.
 */
export function healthConditions(name: string, d: RolloutState, floor: number): ConditionInput[] {
  const complete = rolloutComplete(d);
  const ready: ConditionInput =
    floor === 0 && d.replicas === 0
      ? { type: ConditionType.Ready, status: 'True', reason: Reason.ScaledToZero, message: `${name} is scaled to zero workers` }
      : floor > 0 && d.available >= floor
        ? {
            type: ConditionType.Ready,
            status: 'True',
            reason: Reason.ReplicasReady,
            message: `${d.available}/${floor} workers of ${name} are available`,
          }
        : {
            type: ConditionType.Ready,
            status: 'False',
            reason: Reason.ReplicasNotReady,
            message: `${d.available}/${Math.max(floor, 1)} workers of ${name} are available`,
          };
  const progressing: ConditionInput = complete
    ? {
        type: ConditionType.Progressing,
        status: 'False',
        reason: Reason.RolloutComplete,
        message: `Deployment ${name} has ${d.updated} updated workers`,
      }
    : {
        type: ConditionType.Progressing,
        status: 'True',
        reason: Reason.RollingOut,
        message:
          d.observedGeneration < d.generation
            ? `Deployment ${name}: waiting for the Deployment controller to observe generation ${d.generation}`
            : `Deployment ${name} is rolling out: ${d.updated}/${d.replicas} updated, ${d.available} available`,
      };
  return [
    ready,
    progressing,
    { type: ConditionType.Degraded, status: 'False', reason: Reason.AsExpected, message: `All children of ${name} are applied` },
  ];
}

/** Transcripts on an emptyDir vanish with the pod: say so, as a condition that stays visible. */
export function transcriptCondition(name: string, store: string | undefined): ConditionInput {
  return store?.startsWith('s3://')
    ? {
        type: ConditionType.TranscriptsDurable,
        status: 'True',
        reason: Reason.ObjectStore,
        message: `Transcripts of ${name} go to ${store}`,
      }
    : {
        type: ConditionType.TranscriptsDurable,
        status: 'False',
        reason: Reason.EphemeralTranscriptStore,
        message: `Transcripts of ${name} are written to the pod's emptyDir and are lost with the pod; set spec.transcriptStore to s3://<bucket>[/<prefix>]`,
      };
}

/**
 * What the three conditions say when the spec cannot be satisfied. Ready carries the cause too (it
 * is the reason `kubectl get vwp` prints); Progressing says Blocked.
 */
export function blockedConditions(reason: string, message: string): ConditionInput[] {
  return [
    { type: ConditionType.Ready, status: 'False', reason, message },
    { type: ConditionType.Progressing, status: 'False', reason: Reason.Blocked, message },
    { type: ConditionType.Degraded, status: 'True', reason, message },
  ];
}

/**
 * A pool with self-hosted speech: whether its speech server answers (at least one available pod).
 * Workers without it cannot hear or speak, so Ready waits for it too (reconcile.ts).
 */
export function speechCondition(deployment: string, available: number): ConditionInput {
  return available > 0
    ? {
        type: ConditionType.SpeechReady,
        status: 'True',
        reason: Reason.SpeechAvailable,
        message: `${available} speech servers of Deployment ${deployment} are available`,
      }
    : {
        type: ConditionType.SpeechReady,
        status: 'False',
        reason: Reason.SpeechNotReady,
        message: `no speech server of Deployment ${deployment} is available yet`,
      };
}

/**
 * A problem of the pods (operator/pod-health.ts) on the conditions: Degraded says it, and Ready or
 * SpeechReady, while False, carry its reason and message instead of "not ready yet".
 */
export function withPodProblem(conditions: ConditionInput[], problem: { reason: string; message: string } | undefined): ConditionInput[] {
  if (!problem) return conditions;
  return conditions.map((c) =>
    c.type === ConditionType.Degraded
      ? { ...c, status: 'True', reason: problem.reason, message: problem.message }
      : (c.type === ConditionType.Ready || c.type === ConditionType.SpeechReady) && c.status === 'False'
        ? { ...c, reason: problem.reason, message: problem.message }
        : c,
  );
}
