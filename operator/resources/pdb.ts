/** The PodDisruptionBudget: voluntary evictions take at most one worker at a time. */
import type { KubeObject, VoiceWorkerPool } from '../types.ts';
import { childMetadata, selectorLabels } from './common.ts';

export function buildPdb(pool: VoiceWorkerPool): KubeObject {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: childMetadata(pool),
    spec: { maxUnavailable: 1, selector: { matchLabels: selectorLabels(pool) } },
  };
}
