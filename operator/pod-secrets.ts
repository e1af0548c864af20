/**
 * Where the operator may not read Secrets (its RBAC is scoped to the watched namespaces), a missing
 * Secret or key still shows: the kubelet cannot start the worker container and says why in the
 * pod's status (`CreateContainerConfigError`). This reads that, from the pods of the pool.
 */
import { Reason } from './conditions.ts';
import type { VoiceWorkerPool } from './types.ts';
import type { Problem } from './validate.ts';

interface ContainerStatus {
  name: string;
  image?: string;
  ready?: boolean;
  state?: { waiting?: { reason?: string; message?: string } };
  lastState?: { terminated?: { reason?: string; exitCode?: number } };
}

/** The parts of a pod the operator reads (operator/pod-health.ts reads the rest). */
export interface PodStatusView {
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; deletionTimestamp?: string };
  status?: {
    conditions?: Array<{ type: string; status: string; reason?: string; message?: string }>;
    containerStatuses?: ContainerStatus[];
    initContainerStatuses?: ContainerStatus[];
  };
}

/** The first pod whose container waits for a Secret (or a key of one) that is not there. Pure. */
export function secretProblemFromPods(pool: VoiceWorkerPool, pods: PodStatusView[]): Problem | undefined {
  for (const pod of pods) {
    for (const c of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) {
      const waiting = c.state?.waiting;
      if (waiting?.reason !== 'CreateContainerConfigError' || !waiting.message) continue;
      // kubelet: `secret "name" not found`, or `couldn't find key k in Secret ns/name`.
      const missingSecret = /secret "([^"]+)" not found/i.exec(waiting.message);
      const missingKey = /couldn't find key (\S+) in Secret (\S+)/i.exec(waiting.message);
      if (!missingSecret && !missingKey) continue;
      const where = `pod ${pod.metadata.name} of VoiceWorkerPool ${pool.metadata.name} cannot start`;
      return missingSecret
        ? {
            reason: Reason.SecretNotFound,
            message:
              `Secret ${pool.metadata.namespace}/${missingSecret[1]} does not exist: ${where} (the operator may not ` +
              `read Secrets in ${pool.metadata.namespace}, so it learns this from the pod)`,
          }
        : { reason: Reason.SecretKeyNotFound, message: `Secret ${missingKey![2]} has no key "${missingKey![1]}": ${where}` };
    }
  }
  return undefined;
}
