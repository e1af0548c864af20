/**
 * A partitioned leader: its API calls hang. It must step down by its renew deadline on its own
 * timer, abort what it started, and write nothing afterwards; the standby takes over.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childPath } from '../../operator/children.ts';
import { KubeClient } from '../../operator/kube.ts';
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

describe('leader election under a partition', () => {
  it('steps the hung leader down by its deadline; the standby takes over; the old leader writes nothing after', async () => {
    const ns = await createNamespace(kube, 'partition');
    await createSecret(kube, ns, 'worker', { token: 'shared-worker-token' });
    const proxy = await startApiProxy(kubeInfo().adminKubeconfig);
    const behind = await KubeClient.fromKubeConfig(proxy.kubeconfig);
    const config = { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 300 };
    const leader = await runOperator(behind, ns, config);
    let standby: Awaited<ReturnType<typeof runOperator>> | undefined;
    try {
      await eventually(
        async () => leader.isLeader(),
        (x) => x,
        'the proxied operator leads',
      );
      standby = await runOperator(kube, ns, config);
      await createPool(kube, ns, 'before', poolSpec());
      await eventually(
        () => getOrUndefined(kube, childPath('Deployment', ns, 'before')),
        (d) => d !== undefined,
        'before reconciled by the leader',
      );

      proxy.partition();
      const cut = performance.now();
      // Work for the hung leader: it sees the new pool on its open watch and its writes hang.
      await createPool(kube, ns, 'during', poolSpec());
      await eventually(
        async () => leader.isLeader(),
        (x) => !x,
        'the hung leader steps down',
        10_000,
      );
      const steppedDown = performance.now() - cut;
      expect(steppedDown).toBeLessThan(config.renewDeadlineMs + config.retryPeriodMs + 1500);
      await eventually(
        async () => standby!.isLeader(),
        (x) => x,
        'the standby takes over',
        15_000,
      );
      await eventually(
        () => getOrUndefined(kube, childPath('Deployment', ns, 'during')),
        (d) => d !== undefined,
        'during reconciled by the new leader',
        15_000,
      );

      // The network heals: whatever the old leader still had waiting would reach the server now.
      proxy.heal();
      await eventually(
        async () => proxy.forwarded.filter((r) => r.at >= cut).length,
        () => true,
        'a moment for held requests',
      );
      await new Promise((r) => setTimeout(r, 1500)); // a measurement window: writes would land in it
      const writes = proxy.forwarded.filter((r) => r.at >= cut && r.method !== 'GET');
      expect(writes, JSON.stringify(writes)).toEqual([]);
      expect(leader.isLeader()).toBe(false);
    } finally {
      await standby?.stop();
      await leader.stop();
      behind.close();
      await proxy.close();
    }
  });

  it('a leader that stops releases the lease only after its workers stopped: no write follows the release', async () => {
    const ns = await createNamespace(kube, 'release');
    await createSecret(kube, ns, 'worker', { token: 'shared-worker-token' });
    const proxy = await startApiProxy(kubeInfo().adminKubeconfig);
    const behind = await KubeClient.fromKubeConfig(proxy.kubeconfig);
    const leader = await runOperator(behind, ns, { workers: 8 });
    try {
      await eventually(
        async () => leader.isLeader(),
        (x) => x,
        'the proxied operator leads',
      );
      // Busy workers at the moment of stopping.
      await Promise.all(Array.from({ length: 12 }, (_, i) => createPool(kube, ns, `busy-${i}`, poolSpec())));
      await eventually(
        async () => proxy.forwarded.filter((r) => r.method === 'PATCH').length,
        (n) => n > 0,
        'reconciles under way',
      );
      await leader.stop();
      const release = proxy.forwarded.findLastIndex((r) => r.method === 'PUT' && r.path.includes('/leases/'));
      expect(release).toBeGreaterThanOrEqual(0);
      const after = proxy.forwarded.slice(release + 1).filter((r) => r.method !== 'GET');
      expect(after, JSON.stringify(after)).toEqual([]);
    } finally {
      await leader.stop();
      behind.close();
      await proxy.close();
    }
  });
});
