/** Two operator replicas on one Lease: exactly one leads, and the other takes over when it stops. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childPath } from '../../operator/children.ts';
import type { KubeClient } from '../../operator/kube.ts';
import {
  adminClient,
  createNamespace,
  createPool,
  createSecret,
  ensureCrd,
  eventually,
  getOrUndefined,
  poolSpec,
  runOperator,
} from './helpers.ts';

let kube: KubeClient;
beforeAll(async () => {
  kube = await adminClient();
  await ensureCrd(kube);
});
afterAll(() => kube?.close());

describe('leader election', () => {
  it('runs one leader among two replicas and fails over to the standby', async () => {
    const ns = await createNamespace(kube, 'leader');
    await createSecret(kube, ns, 'worker', { token: 't' });
    const a = await runOperator(kube, ns);
    const b = await runOperator(kube, ns);
    try {
      await eventually(
        async () => [a.isLeader(), b.isLeader()],
        ([x, y]) => x !== y,
        'exactly one leader',
      );
      const [leader, standby] = a.isLeader() ? [a, b] : [b, a];
      const lease = await kube.get<{ spec: { holderIdentity: string } }>(
        `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/voice-operator-leader`,
      );
      expect(lease.spec.holderIdentity).toBe(leader.identity);

      await createPool(kube, ns, 'first', poolSpec());
      await eventually(
        () => getOrUndefined(kube, childPath('Deployment', ns, 'first')),
        (d) => d !== undefined,
        'first reconciled by the leader',
      );
      expect(standby.reconciles()).toBe(0);
      // The standby stays ready (it talks to the API server) but does not reconcile.
      expect((await fetch(`http://127.0.0.1:${standby.port}/readyz`)).status).toBe(200);
      expect(await (await fetch(`http://127.0.0.1:${standby.port}/metrics`)).text()).toContain(
        'leader_election_master_status{name="voice-operator-leader"} 0',
      );

      await leader.stop();
      await eventually(
        async () => standby.isLeader(),
        (x) => x,
        'standby to take over',
        10_000,
      );
      await createPool(kube, ns, 'second', poolSpec());
      await eventually(
        () => getOrUndefined(kube, childPath('Deployment', ns, 'second')),
        (d) => d !== undefined,
        'second reconciled by the new leader',
      );
      // The count goes up when a whole reconcile has finished; the Deployment is its first write.
      await eventually(
        async () => standby.reconciles(),
        (n) => n > 0,
        'the new leader to finish a reconcile',
      );
      const after = await kube.get<{ spec: { holderIdentity: string; leaseTransitions: number } }>(
        `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/voice-operator-leader`,
      );
      expect(after.spec.holderIdentity).toBe(standby.identity);
      expect(after.spec.leaseTransitions).toBeGreaterThanOrEqual(1);
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  it('takes over from a leader that vanished without releasing the lease, after the lease duration', async () => {
    const ns = await createNamespace(kube, 'crashed');
    // A lease held by a replica that died: recently renewed, never released.
    const now = new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
    await kube.request('POST', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`, {
      body: {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: 'voice-operator-leader' },
        spec: { holderIdentity: 'dead-replica', leaseDurationSeconds: 3, renewTime: now, acquireTime: now, leaseTransitions: 0 },
      },
    });
    const started = Date.now();
    const op = await runOperator(kube, ns);
    try {
      await eventually(
        async () => op.isLeader(),
        (x) => x,
        'take over after expiry',
        10_000,
      );
      expect(Date.now() - started).toBeGreaterThanOrEqual(2500);
    } finally {
      await op.stop();
    }
  });
});
