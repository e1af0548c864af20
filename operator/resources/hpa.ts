/**
 * The HorizontalPodAutoscaler (autoscaling/v2): CPU target (and busy sessions per pod when asked),
 * the floor as its minimum. A pool without `autoscaling` gets the design card's default: 70 % CPU,
 * `replicas` as the floor, at most DEFAULT_MAX_REPLICAS (or the floor, if higher).
 */
import type { KubeObject, VoiceWorkerPool, VoiceWorkerPoolSpec } from '../types.ts';
import { childMetadata } from './common.ts';

export const DEFAULT_MAX_REPLICAS = 10;
/** The worker's gauge of sessions running on a pod (worker/telemetry/metrics.ts), served per pod by a custom metrics adapter. */
export const BUSY_SESSIONS_METRIC = 'worker_active_sessions';

type Autoscaling = NonNullable<VoiceWorkerPoolSpec['autoscaling']>;

const DEFAULT_AUTOSCALING: Autoscaling = {
  enabled: true,
  minReplicas: 1,
  maxReplicas: DEFAULT_MAX_REPLICAS,
  targetCPUUtilizationPercentage: 70,
  scaleDown: { stabilizationWindowSeconds: 300, maxPercentPerMinute: 10 },
};

/**
 * The autoscaling in force: the pool's own, the default when it has none, or undefined when it is
 * off (explicitly, or a pool without `autoscaling` scaled to zero replicas). Local rooms get no
 * default: a room lives in one pod's memory, so such a pool scales out only when it says how
 * respondents reach each pod (validate.ts).
 */
export function effectiveAutoscaling(spec: VoiceWorkerPoolSpec): Autoscaling | undefined {
  if (spec.autoscaling) return spec.autoscaling.enabled ? spec.autoscaling : undefined;
  return spec.replicas > 0 && spec.roomProvider !== 'local' ? DEFAULT_AUTOSCALING : undefined;
}

/** None when autoscaling is off; `floor` is the computed replica floor (sizing and windows). */
export function buildHpa(pool: VoiceWorkerPool, floor: number): KubeObject | undefined {
  const autoscaling = effectiveAutoscaling(pool.spec);
  if (!autoscaling) return undefined;
  const minReplicas = Math.max(1, floor);
  const metrics: unknown[] = [
    {
      type: 'Resource',
      resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: autoscaling.targetCPUUtilizationPercentage } },
    },
  ];
  if (autoscaling.targetBusySessionsPerPod !== undefined) {
    // Scale on what fills up: the HPA takes the larger of the two proposals.
    metrics.push({
      type: 'Pods',
      pods: {
        metric: { name: BUSY_SESSIONS_METRIC },
        target: { type: 'AverageValue', averageValue: String(autoscaling.targetBusySessionsPerPod) },
      },
    });
  }
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: childMetadata(pool),
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: pool.metadata.name },
      minReplicas,
      maxReplicas: Math.max(minReplicas, autoscaling.maxReplicas),
      metrics,
      behavior: {
        scaleDown: {
          stabilizationWindowSeconds: autoscaling.scaleDown.stabilizationWindowSeconds,
          policies: [{ type: 'Percent', value: autoscaling.scaleDown.maxPercentPerMinute, periodSeconds: 60 }],
        },
      },
    },
  };
}
