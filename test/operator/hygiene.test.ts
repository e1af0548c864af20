/**
 * What a controller-runtime engineer expects of any operator, checked against the real API server:
 * it names itself (User-Agent), its status writes carry its field manager, it says what happened
 * with Normal Events as well as Warnings, it reconciles nothing before its caches are full, and a
 * child refused with a 500 is retried until it goes through (never judged by the message's text).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childPath } from '../../operator/children.ts';
import { KubeClient } from '../../operator/kube.ts';
import { poolPath } from '../../operator/reconcile.ts';
import type { VoiceWorkerPool } from '../../operator/types.ts';
import { startApiProxy } from './api-proxy.ts';
import {
  adminClient,
  createNamespace,
  createPool,
  createSecret,
  ensureCrd,
  eventually,
  getOrUndefined,
  kubeInfo,
  poolSpec,
  runOperator,
} from './helpers.ts';

let kube: KubeClient;
beforeAll(async () => {
  kube = await adminClient();
  await ensureCrd(kube);
});
afterAll(() => kube?.close());

interface ManagedPool extends VoiceWorkerPool {
  metadata: VoiceWorkerPool['metadata'] & { managedFields?: Array<{ manager: string; operation: string; subresource?: string }> };
}

describe('operator hygiene', () => {
  it('sends a User-Agent of its own, writes status under its field manager and records Normal lifecycle Events', async () => {
    const ns = await createNamespace(kube, 'hygiene');
    await createSecret(kube, ns, 'worker', { token: 't' });
    const proxy = await startApiProxy(kubeInfo().adminKubeconfig);
    const behind = await KubeClient.fromKubeConfig(proxy.kubeconfig);
    const operator = await runOperator(behind, ns);
    try {
      await createPool(kube, ns, 'named', poolSpec({ autoscaling: { enabled: false }, replicas: 2 }));
      const pool = await eventually(
        () => kube.get<ManagedPool>(poolPath(ns, 'named')),
        (p) => p.status?.observedGeneration === 1,
        'named status',
      );
      const agents = new Set(proxy.forwarded.map((r) => r.userAgent));
      expect([...agents]).toHaveLength(1);
      expect([...agents][0]).toMatch(/^voice-operator\/v\d+\.\d+\.\d+ \(linux\/x64\) node\/v\d+/);
      const statusManagers = pool.metadata.managedFields!.filter((f) => f.subresource === 'status').map((f) => f.manager);
      expect(statusManagers).toEqual(['voice-operator']);

      const events = await eventually(
        () =>
          kube.get<{ items: Array<{ type: string; reason: string; message: string; involvedObject: { name: string } }> }>(
            `/api/v1/namespaces/${ns}/events`,
          ),
        (l) => l.items.some((e) => e.reason === 'SpecApplied'),
        'a Normal SpecApplied Event',
      );
      expect(events.items.find((e) => e.reason === 'SpecApplied')).toMatchObject({
        type: 'Normal',
        involvedObject: { name: 'named' },
        message: 'Generation 1 of VoiceWorkerPool named is applied to its children',
      });
      // The floor moves with the spec: a Normal Event says so, once.
      await kube.mergePatch(poolPath(ns, 'named'), { spec: { replicas: 4 } });
      const moved = await eventually(
        () => kube.get<{ items: Array<{ type: string; reason: string; message: string }> }>(`/api/v1/namespaces/${ns}/events`),
        (l) => l.items.some((e) => e.reason === 'FloorChanged'),
        'a Normal FloorChanged Event',
      );
      expect(moved.items.filter((e) => e.reason === 'FloorChanged').map((e) => [e.type, e.message])).toEqual([
        ['Normal', 'The replica floor of named moved from 2 to 4'],
      ]);
    } finally {
      await operator.stop();
      behind.close();
      await proxy.close();
    }
  });

  it('reconciles nothing until every informer has listed', async () => {
    const ns = await createNamespace(kube, 'sync');
    await createSecret(kube, ns, 'worker', { token: 't' });
    await createPool(kube, ns, 'early', poolSpec());
    const proxy = await startApiProxy(kubeInfo().adminKubeconfig);
    const behind = await KubeClient.fromKubeConfig(proxy.kubeconfig);
    // The Deployments' list hangs: every other cache fills, the pools' among them.
    proxy.hold(/^GET \/apis\/apps\/v1\/namespaces\/[^/]+\/deployments\?(?!.*watch=true)/);
    const operator = await runOperator(behind, ns);
    try {
      await eventually(
        async () => operator.isLeader(),
        (x) => x,
        'the operator leads',
      );
      await eventually(
        async () => proxy.forwarded.filter((r) => r.path.includes('/voiceworkerpools?')).length,
        (n) => n > 0,
        'the pool list sent',
      );
      // The pool is in its cache and queued; no worker may take it while a cache is still empty.
      await eventually(
        async () => operator.metrics.queueAdds.get(),
        (m) => m.values.some((x) => x.value > 0),
        'the pool queued',
      );
      expect(operator.reconciles()).toBe(0);
      expect(await getOrUndefined(kube, childPath('Deployment', ns, 'early'))).toBeUndefined();
      proxy.heal();
      await eventually(
        () => getOrUndefined(kube, childPath('Deployment', ns, 'early')),
        (d) => d !== undefined,
        'early reconciled once synced',
      );
    } finally {
      await operator.stop();
      behind.close();
      await proxy.close();
    }
  });

  it('retries a child the API server answers with a 500 that names no field of it, until it goes through', async () => {
    const ns = await createNamespace(kube, 'fivehundred');
    await createSecret(kube, ns, 'worker', { token: 't' });
    const proxy = await startApiProxy(kubeInfo().adminKubeconfig);
    const behind = await KubeClient.fromKubeConfig(proxy.kubeconfig);
    // The text of a refused field, but naming none: not a refusal of the spec (isolation.test.ts has one).
    proxy.fail(
      /^PATCH \/apis\/policy\/v1\/namespaces\/[^/]+\/poddisruptionbudgets\//,
      500,
      'failed to create typed patch object (/v1, Kind=x): etcd leader changed',
    );
    const operator = await runOperator(behind, ns);
    try {
      await createPool(kube, ns, 'flaky', poolSpec());
      const degraded = await eventually(
        () => kube.get<VoiceWorkerPool>(poolPath(ns, 'flaky')),
        (p) => p.status?.conditions?.find((c) => c.type === 'Degraded')?.status === 'True',
        'flaky Degraded while the 500s last',
      );
      expect(degraded.status!.conditions!.find((c) => c.type === 'Degraded')).toMatchObject({
        reason: 'ApplyFailed',
        message: expect.stringContaining('retrying'),
      });
      proxy.heal();
      // No spec change: the retry alone brings it through.
      await eventually(
        () => getOrUndefined(kube, childPath('PodDisruptionBudget', ns, 'flaky')),
        (d) => d !== undefined,
        'the PDB applied on a retry',
        30_000,
      );
      await eventually(
        () => kube.get<VoiceWorkerPool>(poolPath(ns, 'flaky')),
        (p) => p.status?.conditions?.find((c) => c.type === 'Degraded')?.status === 'False',
        'flaky no longer Degraded',
        30_000,
      );
    } finally {
      await operator.stop();
      behind.close();
      await proxy.close();
    }
  });
});
