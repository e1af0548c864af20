/**
 * Why a pool's pods do not run, read from their status as the kubelet and the scheduler write it:
 * an image that cannot be pulled, a container in a crash loop, a pod no node can take. The workers'
 * pods are looked at before the speech server's, and within each the first pod by name, so the
 * message stays the same from one pass to the next. Pure.
 */
import { Reason } from './conditions.ts';
import { secretProblemFromPods, type PodStatusView } from './pod-secrets.ts';
import type { VoiceWorkerPool } from './types.ts';
import type { Problem } from './validate.ts';

/** A problem of the pods; `speech` when it is the speech server's (then SpeechReady says it too). */
export interface PodProblem extends Problem {
  speech: boolean;
}

const PULL_FAILURES = new Set(['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'ErrImageNeverPull']);

const isSpeechPod = (pod: PodStatusView): boolean => pod.metadata.labels?.['app.kubernetes.io/component'] === 'speech';

function containers(pod: PodStatusView) {
  return [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
}

/** One pod's problem, in the words a person can act on; undefined when it has none of these. */
function problemOf(pool: VoiceWorkerPool, pod: PodStatusView): Problem | undefined {
  const speech = isSpeechPod(pod);
  const who = speech
    ? `speech server pod ${pod.metadata.name} of VoiceWorkerPool ${pool.metadata.name}`
    : `worker pod ${pod.metadata.name} of VoiceWorkerPool ${pool.metadata.name}`;
  const imageField = speech ? 'spec.speech.selfHosted.image (or spec.image)' : 'spec.image';
  for (const c of containers(pod)) {
    const waiting = c.state?.waiting;
    if (waiting?.reason && PULL_FAILURES.has(waiting.reason)) {
      // ErrImagePull and ImagePullBackOff alternate: the message names neither, so it does not flap.
      const detail = waiting.reason === 'InvalidImageName' && waiting.message ? ` (${waiting.message})` : '';
      return {
        reason: Reason.ImagePullError,
        message:
          `${who} cannot pull the image "${c.image ?? '?'}" of container ${c.name}${detail}: check ${imageField} ` +
          `(repository, tag, digest) and spec.image.pullSecrets; kubectl describe pod ${pod.metadata.name} shows the ` +
          `registry's answer`,
      };
    }
    if (waiting?.reason === 'CrashLoopBackOff') {
      const last = c.lastState?.terminated;
      const exit = last ? ` (last exit: ${last.reason ?? 'terminated'}, code ${last.exitCode ?? '?'})` : '';
      return {
        reason: Reason.CrashLoopBackOff,
        message: `${who}: container ${c.name} keeps crashing${exit}; kubectl logs ${pod.metadata.name} -c ${c.name} --previous shows why`,
      };
    }
  }
  const scheduled = pod.status?.conditions?.find((x) => x.type === 'PodScheduled');
  if (scheduled?.status === 'False' && scheduled.reason === 'Unschedulable') {
    const resources = speech ? 'spec.speech.selfHosted.resources' : 'spec.resources.requests';
    return {
      reason: Reason.Unschedulable,
      message: `${who} cannot be scheduled: ${scheduled.message ?? 'no node fits it'}; lower ${resources} or the replicas, widen spec.placement, or add nodes`,
    };
  }
  return undefined;
}

/** The first problem of the pool's pods (a missing Secret first), or undefined. */
export function podProblem(pool: VoiceWorkerPool, pods: PodStatusView[]): PodProblem | undefined {
  const live = pods
    .filter((p) => !p.metadata.deletionTimestamp)
    .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));
  for (const speech of [false, true]) {
    const group = live.filter((p) => isSpeechPod(p) === speech);
    const secret = secretProblemFromPods(pool, group);
    if (secret) return { ...secret, speech };
    for (const pod of group) {
      const found = problemOf(pool, pod);
      if (found) return { ...found, speech };
    }
  }
  return undefined;
}

/**
 * What of a pod may change a pool's status: its waiting reasons, whether it is scheduled, whether it
 * is going away. The pod informer enqueues the pool only when this changes, not on every probe.
 */
export function podFingerprint(pod: PodStatusView): string {
  const scheduled = pod.status?.conditions?.find((x) => x.type === 'PodScheduled');
  return JSON.stringify([
    pod.metadata.deletionTimestamp ?? null,
    scheduled ? [scheduled.status, scheduled.reason ?? null, scheduled.message ?? null] : null,
    containers(pod).map((c) => [
      c.name,
      c.ready ?? null,
      c.state?.waiting?.reason ?? null,
      c.state?.waiting?.reason === 'CreateContainerConfigError' ? (c.state.waiting.message ?? null) : null,
    ]),
  ]);
}
