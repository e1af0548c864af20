/**
 * What platform scanners (kube-score, kube-linter, Polaris, checkov) ask of the worker pods, and
 * what OpenShift's restricted SCC refuses: bounded scratch space, ids the platform may assign, an
 * image pinned by digest, a PDB that lets unhealthy pods go, a NetworkPolicy for the workers.
 */
import { describe, expect, it } from 'vitest';
import { poolFixture } from '../../test/operator/pool-fixture.ts';
import { isPoolOwner } from '../children.ts';
import type { VoiceWorkerPool } from '../types.ts';
import { buildDeployment, SCRATCH } from './deployment.ts';
import { desiredState } from './index.ts';
import { buildNetworkPolicy } from './networkpolicy.ts';
import { buildPdb } from './pdb.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- assertions read deep into the built objects
const podOf = (p: VoiceWorkerPool, options?: Parameters<typeof buildDeployment>[2]): any =>
  (buildDeployment(p, 1, options).spec as { template: { spec: unknown } }).template.spec;

describe('worker pods for platform teams', () => {
  it('bound every emptyDir and request the ephemeral storage they may use', () => {
    const spec = podOf(poolFixture());
    expect(spec.volumes.filter((v: { emptyDir?: unknown }) => v.emptyDir)).toEqual([
      { name: 'tmp', emptyDir: { sizeLimit: SCRATCH.tmp } },
      { name: 'data', emptyDir: { sizeLimit: SCRATCH.data } },
    ]);
    expect(spec.containers[0].resources.requests['ephemeral-storage']).toBe(SCRATCH.request);
    expect(spec.containers[0].resources.limits['ephemeral-storage']).toBe(SCRATCH.limit);
  });

  it('fix user, group and fsGroup by default, and leave all three to the platform when configured so', () => {
    expect(podOf(poolFixture()).securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: 1000,
      runAsGroup: 1000,
      fsGroup: 1000,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(podOf(poolFixture(), {}).securityContext).toEqual({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(podOf(poolFixture(), { runAsUser: 1000680000 }).securityContext).toMatchObject({ runAsUser: 1000680000, fsGroup: 1000680000 });
  });

  it('pin the image by digest when the pool gives one, keeping the tag for readers', () => {
    const digest = `sha256:${'c'.repeat(64)}`;
    expect(
      podOf(poolFixture({ image: { repository: 'registry.example.com/team/voice-worker', tag: 'v1.3.0', digest } })).containers[0].image,
    ).toBe(`registry.example.com/team/voice-worker:v1.3.0@${digest}`);
    expect(podOf(poolFixture()).containers[0].image).toBe('reg/worker:v1.3.0');
  });

  it('let the PDB evict pods that are not Ready', () => {
    expect(buildPdb(poolFixture()).spec).toMatchObject({ maxUnavailable: 1, unhealthyPodEvictionPolicy: 'AlwaysAllow' });
  });

  it('give the workers a NetworkPolicy when configured: 7860 from anywhere, 9090 from the scrapers only', () => {
    expect(buildNetworkPolicy(poolFixture(), {})).toBeUndefined();
    const policy = buildNetworkPolicy(poolFixture(), { networkPolicy: { metricsNamespaces: ['monitoring', 'observability'] } })!;
    expect(policy.metadata.ownerReferences).toHaveLength(1);
    expect(policy.spec).toEqual({
      podSelector: {
        matchLabels: { 'app.kubernetes.io/name': 'voice-worker', 'app.kubernetes.io/instance': 'p', 'voice.service.io/pool': 'p' },
      },
      policyTypes: ['Ingress'],
      ingress: [
        { ports: [{ port: 7860, protocol: 'TCP' }] },
        {
          from: [
            {
              namespaceSelector: {
                matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['monitoring', 'observability'] }],
              },
            },
          ],
          ports: [{ port: 9090, protocol: 'TCP' }],
        },
      ],
    });
    // No scrapers named: the metrics port is closed to every pod.
    expect(
      (buildNetworkPolicy(poolFixture(), { networkPolicy: { metricsNamespaces: [] } })!.spec as { ingress: unknown[] }).ingress,
    ).toHaveLength(1);
    const state = desiredState(poolFixture(), new Date(), { networkPolicy: { metricsNamespaces: [] } });
    expect(state.apply.map((o) => o.kind)).toContain('NetworkPolicy');
    expect(desiredState(poolFixture(), new Date()).absent).toContainEqual({ kind: 'NetworkPolicy', name: 'p' });
  });

  it('recognise a pool owner by kind and API group, not by kind alone', () => {
    const ref = { kind: 'VoiceWorkerPool', name: 'p', uid: 'u', controller: true };
    expect(isPoolOwner({ ...ref, apiVersion: 'voice.service.io/v1alpha1' })).toBe(true);
    expect(isPoolOwner({ ...ref, apiVersion: 'voice.service.io/v1beta1' })).toBe(true);
    expect(isPoolOwner({ ...ref, apiVersion: 'other.example.com/v1' })).toBe(false);
  });
});
