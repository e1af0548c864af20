import { describe, expect, it } from 'vitest';
import { fieldOwners } from './children.ts';
import { trimChild, trimPod, trimPool } from './cache-transform.ts';
import { podProblem } from './pod-health.ts';
import { poolFixture } from '../test/operator/pool-fixture.ts';
import type { KubeItem } from './watch.ts';

const lastApplied = 'kubectl.kubernetes.io/last-applied-configuration';
const managedFields = [
  { manager: 'kubectl', operation: 'Apply', fieldsV1: { 'f:spec': { 'f:extraEnv': {}, 'f:replicas': {} } } },
  { manager: 'voice-operator', operation: 'Update', fieldsV1: { 'f:status': { 'f:conditions': {} } } },
];

describe('what the informers keep', () => {
  it('keeps of a pool its spec, status and the metadata the reconcile reads; no managedFields, no annotations', () => {
    const spec = { replicas: 3, extraEnv: [{ name: 'A', value: 'x'.repeat(8192) }] };
    const pool: KubeItem = {
      apiVersion: 'voice.service.io/v1beta1',
      kind: 'VoiceWorkerPool',
      metadata: {
        name: 'p',
        namespace: 'ns',
        uid: 'u',
        generation: 2,
        resourceVersion: '9',
        labels: { team: 'a' },
        annotations: { [lastApplied]: JSON.stringify({ spec }) },
        managedFields,
        creationTimestamp: '2030-01-01T00:00:00Z',
      },
      spec,
      status: { observedGeneration: 1 },
    };
    const kept = trimPool(pool);
    expect(kept).toEqual({
      apiVersion: pool.apiVersion,
      kind: pool.kind,
      metadata: { name: 'p', namespace: 'ns', uid: 'u', generation: 2, resourceVersion: '9', labels: { team: 'a' } },
      spec,
      status: { observedGeneration: 1 },
    });
    expect(JSON.stringify(kept).length).toBeLessThan(JSON.stringify(pool).length / 1.8);
  });

  it('keeps of a child all but its managedFields, except who owns spec.replicas', () => {
    const child: KubeItem = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'p', namespace: 'ns', annotations: { [lastApplied]: '{}', keep: 'me' }, managedFields },
      spec: { replicas: 3 },
      status: { readyReplicas: 1 },
    };
    const kept = trimChild(child);
    expect(kept.metadata.annotations).toEqual({ keep: 'me' });
    expect(kept.spec).toEqual({ replicas: 3 });
    const owners = fieldOwners(kept.metadata.managedFields as Parameters<typeof fieldOwners>[0], ['spec', 'replicas']);
    expect(owners).toEqual(['kubectl']);
    expect(fieldOwners(kept.metadata.managedFields as Parameters<typeof fieldOwners>[0], ['status', 'conditions'])).toEqual([]);
  });

  it('keeps of a pod who it is and its status, not its spec, and pod-health reads the same from it', () => {
    const pod: KubeItem = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p-1', namespace: 'ns', labels: { pool: 'p' }, managedFields: [{ manager: 'kubelet' }], annotations: { a: 'b' } },
      spec: { containers: [{ name: 'worker', env: Array.from({ length: 32 }, (_, i) => ({ name: `E${i}`, value: 'x'.repeat(8192) })) }] },
      status: {
        phase: 'Pending',
        containerStatuses: [{ name: 'worker', image: 'reg/w:1', state: { waiting: { reason: 'ErrImagePull', message: 'not found' } } }],
      },
    };
    const kept = trimPod(pod);
    expect(kept.spec).toBeUndefined();
    expect(kept.metadata).toEqual({ name: 'p-1', namespace: 'ns', labels: { pool: 'p' } });
    expect(JSON.stringify(kept).length).toBeLessThan(1000);
    const pool = poolFixture();
    const asView = (x: KubeItem) => x as unknown as Parameters<typeof podProblem>[1][number];
    expect(podProblem(pool, [asView(kept)])).toEqual(podProblem(pool, [asView(pod)]));
  });
});
