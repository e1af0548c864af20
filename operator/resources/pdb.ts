/**
 * The PodDisruptionBudget: voluntary evictions take at most one worker at a time. A pod that is not
 * Ready (crash-looping, never started) may always be evicted: it serves nothing, and counting it
 * against the budget would block every node drain (policy/v1 `unhealthyPodEvictionPolicy`, on by
 * default since Kubernetes 1.27).
 */
import type { KubeObject, VoiceWorkerPool } from '../types.ts';
import { childMetadata, selectorLabels } from './common.ts';

export function buildPdb(pool: VoiceWorkerPool): KubeObject {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: childMetadata(pool),
    spec: { maxUnavailable: 1, unhealthyPodEvictionPolicy: 'AlwaysAllow', selector: { matchLabels: selectorLabels(pool) } },
  };
}
