/** The HorizontalPodAutoscaler (autoscaling/v2): CPU target, the floor as its minimum. */
import type { KubeObject, VoiceWorkerPool } from '../types.ts';
import { childMetadata } from './common.ts';

/** None when autoscaling is off; `floor` is the computed replica floor (sizing and windows). */
export function buildHpa(pool: VoiceWorkerPool, floor: number): KubeObject | undefined {
  const autoscaling = pool.spec.autoscaling;
  if (!autoscaling?.enabled) return undefined;
  const minReplicas = Math.max(1, floor);
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: childMetadata(pool),
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: pool.metadata.name },
      minReplicas,
      maxReplicas: Math.max(minReplicas, autoscaling.maxReplicas),
      metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: autoscaling.targetCPUUtilizationPercentage } } }],
      behavior: {
        scaleDown: {
          stabilizationWindowSeconds: autoscaling.scaleDown.stabilizationWindowSeconds,
          policies: [{ type: 'Percent', value: autoscaling.scaleDown.maxPercentPerMinute, periodSeconds: 60 }],
        },
      },
    },
  };
}
