import { describe, expect, it } from 'vitest';
import type { VoiceWorkerPool } from '../types.ts';
import { endpointOf } from './common.ts';
import { buildDeployment, workerEnv } from './deployment.ts';
import { buildHpa } from './hpa.ts';
import { desiredState } from './index.ts';
import { buildIngress } from './ingress.ts';
import { buildPdb } from './pdb.ts';
import { buildService } from './service.ts';
import { poolFixture } from '../../test/operator/pool-fixture.ts';

// Daily rooms, and only the worker token among the Secrets.
const pool = (spec: Partial<VoiceWorkerPool['spec']> = {}): VoiceWorkerPool =>
  poolFixture({ roomProvider: 'daily', secrets: { workerToken: { name: 'w', key: 'token' } }, ...spec });
const autoscaling = {
  enabled: true,
  minReplicas: 2,
  maxReplicas: 10,
  targetCPUUtilizationPercentage: 70,
  scaleDown: { stabilizationWindowSeconds: 300, maxPercentPerMinute: 10 },
};
const now = new Date('2030-01-01T00:00:00Z');

describe('builders', () => {
  it('give every child the same name, labels and one controller owner reference', () => {
    const p = pool({ autoscaling, ingress: { host: 'v.example.com', tlsSecretName: 'tls' } });
    const { apply } = desiredState(p, now);
    expect(apply.map((o) => o.kind)).toEqual(['Deployment', 'Service', 'PodDisruptionBudget', 'Ingress', 'HorizontalPodAutoscaler']);
    for (const child of apply) {
      expect(child.metadata).toMatchObject({
        name: 'p',
        namespace: 'ns',
        labels: { 'voice.service.io/pool': 'p', 'app.kubernetes.io/managed-by': 'voice-operator' },
      });
      expect(child.metadata.ownerReferences).toEqual([
        {
          apiVersion: 'voice.service.io/v1beta1',
          kind: 'VoiceWorkerPool',
          name: 'p',
          uid: 'uid-1',
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
    }
  });

  it('leave replicas out of the Deployment when an HPA owns them', () => {
    expect((desiredState(pool({ autoscaling }), now).apply[0]!.spec as { replicas?: number }).replicas).toBeUndefined();
    const off = { ...autoscaling, enabled: false };
    expect((desiredState(pool({ replicas: 5, autoscaling: off }), now).apply[0]!.spec as { replicas?: number }).replicas).toBe(5);
    expect(
      desiredState(pool({ autoscaling: off }), now)
        .absent.filter((c) => !c.name.endsWith('-speech'))
        .map((c) => c.kind),
    ).toEqual(['Ingress', 'HorizontalPodAutoscaler', 'NetworkPolicy']);
  });

  it('take every provider key from a Secret and never put a value inline', () => {
    const env = workerEnv(
      pool({
        secrets: { workerToken: { name: 'w', key: 'token' }, openaiApiKey: { name: 'ai', key: 'key' } },
        redis: { urlSecret: { name: 'r', key: 'url' } },
      }),
    );
    expect(env).toContainEqual({ name: 'WORKER_TOKEN', valueFrom: { secretKeyRef: { name: 'w', key: 'token' } } });
    expect(env).toContainEqual({ name: 'OPENAI_API_KEY', valueFrom: { secretKeyRef: { name: 'ai', key: 'key' } } });
    expect(env).toContainEqual({ name: 'REDIS_URL', valueFrom: { secretKeyRef: { name: 'r', key: 'url' } } });
    expect(env.find((e) => e.name === 'LLM_API_KEY')).toBeUndefined();
  });

  it('pass the pod name, the transcript store and extra variables after the managed ones', () => {
    const env = workerEnv(
      pool({
        transcriptStore: 's3://bucket/t',
        extraEnv: [
          { name: 'AWS_REGION', value: 'eu-west-1' },
          { name: 'AWS_SECRET_ACCESS_KEY', valueFrom: { secretKeyRef: { name: 's3', key: 'secret' } } },
        ],
      }),
    );
    expect(env).toContainEqual({ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } });
    expect(env).toContainEqual({ name: 'TRANSCRIPT_STORE', value: 's3://bucket/t' });
    expect(env.slice(-2)).toEqual([
      { name: 'AWS_REGION', value: 'eu-west-1' },
      { name: 'AWS_SECRET_ACCESS_KEY', valueFrom: { secretKeyRef: { name: 's3', key: 'secret' } } },
    ]);
  });

  it('mount writable /tmp and data folders under a read-only root', () => {
    const d = buildDeployment(pool(), 1) as unknown as {
      spec: {
        template: {
          spec: { volumes: unknown; containers: Array<{ volumeMounts: unknown; securityContext: { readOnlyRootFilesystem: boolean } }> };
        };
      };
    };
    expect(d.spec.template.spec.containers[0]!.securityContext.readOnlyRootFilesystem).toBe(true);
    expect(d.spec.template.spec.containers[0]!.volumeMounts).toEqual([
      { name: 'tmp', mountPath: '/tmp' },
      { name: 'data', mountPath: '/var/lib/voice-worker' },
    ]);
  });

  it('build a Deployment that keeps serving through rollouts and shutdowns', () => {
    const d = buildDeployment(pool(), 3) as unknown as {
      spec: {
        strategy: unknown;
        template: { spec: { terminationGracePeriodSeconds: number; containers: Array<{ resources: unknown; lifecycle: unknown }> } };
      };
    };
    expect(d.spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: '25%' } });
    expect(d.spec.template.spec.terminationGracePeriodSeconds).toBe(1800);
    expect(d.spec.template.spec.containers[0]!.resources).toEqual({
      requests: { cpu: '2', memory: '4Gi', 'ephemeral-storage': '1Gi' },
      limits: { cpu: '4', memory: '8Gi', 'ephemeral-storage': '6Gi' },
    });
    expect(d.spec.template.spec.containers[0]!.lifecycle).toEqual({ preStop: { exec: { command: ['/bin/sh', '-c', 'sleep 10'] } } });
  });

  it('map Service 443 to the worker port, Ingress TLS to the host, PDB one at a time', () => {
    expect(buildService(pool()).spec).toMatchObject({ ports: [{ name: 'http', port: 443, targetPort: 'http', appProtocol: 'http' }] });
    expect(buildIngress(pool())).toBeUndefined();
    const ingress = buildIngress(pool({ ingress: { host: 'v.example.com', tlsSecretName: 'tls', className: 'nginx' } }))!;
    expect(ingress.spec).toMatchObject({ ingressClassName: 'nginx', tls: [{ hosts: ['v.example.com'], secretName: 'tls' }] });
    expect(buildPdb(pool()).spec).toMatchObject({ maxUnavailable: 1 });
  });

  it('set the HPA minimum to the floor, never below 1 and never above its maximum', () => {
    expect(buildHpa(pool({ autoscaling: { ...autoscaling, enabled: false } }), 4)).toBeUndefined();
    expect(buildHpa(pool({ autoscaling }), 7)!.spec).toMatchObject({
      minReplicas: 7,
      maxReplicas: 10,
      behavior: { scaleDown: { stabilizationWindowSeconds: 300 } },
    });
    expect(buildHpa(pool({ autoscaling }), 0)!.spec).toMatchObject({ minReplicas: 1 });
    expect(buildHpa(pool({ autoscaling: { ...autoscaling, enabled: false } }), 3)).toBeUndefined();
  });

  it('give the endpoint of the ingress host, or of the in-cluster Service', () => {
    expect(endpointOf(pool({ ingress: { host: 'v.example.com', tlsSecretName: 't' } }))).toBe('https://v.example.com/');
    // The Service's 443 speaks plain HTTP unless the pod serves TLS: the endpoint says which.
    expect(endpointOf(pool())).toBe('http://p.ns.svc:443/');
    expect(endpointOf(pool({ podTLS: { secretName: 'pod-tls' } }))).toBe('https://p.ns.svc:443/');
    expect(endpointOf(pool({ publicUrl: 'https://voice.internal.example/' }))).toBe('https://voice.internal.example/');
  });
});
