/**
 * What a worker pod gets from its pool: the C2 management port and probes, C4 TLS in the pod, pod
 * placement and GPUs, default autoscaling, and no service account token.
 */
import { describe, expect, it } from 'vitest';
import type { VoiceWorkerPool } from '../types.ts';
import { buildDeployment } from './deployment.ts';
import { drainGraceSeconds } from './env.ts';
import { buildHpa } from './hpa.ts';
import { desiredState } from './index.ts';
import { buildService } from './service.ts';
import { poolFixture } from '../../test/operator/pool-fixture.ts';

const pool = poolFixture;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- assertions read deep into the built objects
const podOf = (p: VoiceWorkerPool): any => (buildDeployment(p, 1).spec as { template: { spec: unknown } }).template.spec;

describe('worker pod', () => {
  it('exposes the management port `metrics` and probes it there (C2)', () => {
    const c = podOf(pool()).containers[0];
    expect(c.ports).toEqual([
      { name: 'http', containerPort: 7860, protocol: 'TCP' },
      { name: 'metrics', containerPort: 9090, protocol: 'TCP' },
    ]);
    for (const probe of [c.startupProbe, c.livenessProbe, c.readinessProbe]) expect(probe.httpGet.port).toBe('metrics');
    expect(c.env).toContainEqual({ name: 'METRICS_PORT', value: '9090' });
    expect(JSON.stringify(buildService(pool()))).not.toContain('9090');
    const template = (buildDeployment(pool(), 1).spec as { template: { metadata: { annotations: Record<string, string> } } }).template;
    expect(template.metadata.annotations).toEqual({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': '9090',
      'prometheus.io/path': '/metrics',
    });
  });

  it('mounts podTLS read-only and names the Service port https (C4)', () => {
    const p = pool({ podTLS: { secretName: 'pod-tls' } });
    const spec = podOf(p);
    expect(spec.volumes).toContainEqual({ name: 'tls', secret: { secretName: 'pod-tls', defaultMode: 0o440 } });
    expect(spec.containers[0].volumeMounts).toContainEqual({ name: 'tls', mountPath: '/etc/voice-worker/tls', readOnly: true });
    expect(spec.containers[0].env).toEqual(
      expect.arrayContaining([
        { name: 'TLS_CERT_FILE', value: '/etc/voice-worker/tls/tls.crt' },
        { name: 'TLS_KEY_FILE', value: '/etc/voice-worker/tls/tls.key' },
      ]),
    );
    expect(buildService(p).spec).toMatchObject({ ports: [{ name: 'https', appProtocol: 'https', port: 443, targetPort: 'http' }] });
    expect(spec.containers[0].readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'metrics' });
  });

  it('does not mount a service account token', () => {
    expect(podOf(pool()).automountServiceAccountToken).toBe(false);
  });

  it('passes placement through and requests GPUs as requests = limits', () => {
    const placement = {
      nodeSelector: { pool: 'voice' },
      tolerations: [{ key: 'gpu', operator: 'Exists', effect: 'NoSchedule' }],
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }],
          },
        },
      },
      topologySpreadConstraints: [
        {
          maxSkew: 1,
          topologyKey: 'topology.kubernetes.io/zone',
          whenUnsatisfiable: 'ScheduleAnyway',
          labelSelector: { matchLabels: { 'voice.service.io/pool': 'p' } },
        },
      ],
      priorityClassName: 'voice-critical',
    };
    const spec = podOf(
      pool({
        placement,
        resources: {
          requests: { cpu: '2', memory: '4Gi' },
          limits: { cpu: 4, memory: '8Gi' },
          gpu: { count: 1, resourceName: 'nvidia.com/gpu' },
        },
      }),
    );
    expect(spec).toMatchObject(placement);
    expect(spec.containers[0].resources).toEqual({
      requests: { cpu: '2', memory: '4Gi', 'ephemeral-storage': '1Gi', 'nvidia.com/gpu': '1' },
      limits: { cpu: '4', memory: '8Gi', 'ephemeral-storage': '6Gi', 'nvidia.com/gpu': '1' },
    });
    expect(podOf(pool()).nodeSelector).toBeUndefined();
    expect(spec.topologySpreadConstraints).toEqual(placement.topologySpreadConstraints); // the pool's own, not the default
  });

  it('spreads the workers over nodes and zones by default, as a preference a single node still satisfies', () => {
    const spread = podOf(pool()).topologySpreadConstraints;
    const selector = {
      matchLabels: { 'app.kubernetes.io/name': 'voice-worker', 'app.kubernetes.io/instance': 'p', 'voice.service.io/pool': 'p' },
    };
    expect(spread).toEqual([
      { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: selector },
      { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: selector },
    ]);
  });

  it('drains for the grace period less the pre-stop sleep and a margin, within the worker limit', () => {
    expect(drainGraceSeconds(1800)).toBe(1780);
    expect(drainGraceSeconds(30)).toBe(10);
    expect(drainGraceSeconds(86400)).toBe(3600);
  });
});

describe('default autoscaling', () => {
  it('gives a pool without `autoscaling` an HPA at 70 % CPU with replicas as the floor', () => {
    const state = desiredState(pool({ replicas: 3, roomProvider: 'daily' }), new Date());
    expect(state.autoscaled).toBe(true);
    const hpa = state.apply.find((o) => o.kind === 'HorizontalPodAutoscaler')!;
    expect(hpa.spec).toMatchObject({
      minReplicas: 3,
      maxReplicas: 10,
      metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } }],
    });
    expect((state.apply[0]!.spec as { replicas?: number }).replicas).toBeUndefined();
  });

  it('gives a local-rooms pool without `autoscaling` no HPA: its rooms cannot spread over replicas', () => {
    const state = desiredState(pool({ replicas: 1, roomProvider: 'local' }), new Date());
    expect(state.autoscaled).toBe(false);
    expect(state.apply.find((o) => o.kind === 'HorizontalPodAutoscaler')).toBeUndefined();
    expect((state.apply[0]!.spec as { replicas?: number }).replicas).toBe(1);
  });

  it('keeps a pool scaled to zero (no autoscaling object, replicas 0) without an HPA', () => {
    const state = desiredState(pool({ replicas: 0 }), new Date());
    expect(state.autoscaled).toBe(false);
    expect(state.absent).toContainEqual({ kind: 'HorizontalPodAutoscaler', name: state.apply[0]!.metadata.name });
  });

  it('adds busy sessions per pod (the worker gauge) when asked', () => {
    const autoscaling = {
      enabled: true,
      minReplicas: 2,
      maxReplicas: 10,
      targetCPUUtilizationPercentage: 70,
      targetBusySessionsPerPod: 4,
      scaleDown: { stabilizationWindowSeconds: 300, maxPercentPerMinute: 10 },
    };
    const hpa = buildHpa(pool({ autoscaling }), 2)!;
    expect((hpa.spec as { metrics: unknown[] }).metrics[1]).toEqual({
      type: 'Pods',
      pods: { metric: { name: 'worker_active_sessions' }, target: { type: 'AverageValue', averageValue: '4' } },
    });
  });
});
