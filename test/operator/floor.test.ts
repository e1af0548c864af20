/**
 * The replica floor on a real API server: sizing and pre-scaling windows become the HPA minimum,
 * the operator requeues itself at a window's boundary, and a second reconcile changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../lib/log.ts';
import { childPath } from '../../operator/children.ts';
import type { KubeClient } from '../../operator/kube.ts';
import { poolPath, reconcile } from '../../operator/reconcile.ts';
import type { ChildKind } from '../../operator/resources/index.ts';
import type { VoiceWorkerPool } from '../../operator/types.ts';
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

const kinds: ChildKind[] = ['Deployment', 'Service', 'Ingress', 'HorizontalPodAutoscaler', 'PodDisruptionBudget'];
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

describe('replica floor and pre-scaling', () => {
  it('raises the HPA minimum when a window comes within its lead time, with no edit to the pool', async () => {
    const ns = await createNamespace(kube, 'floor');
    await createSecret(kube, ns, 'worker', { token: 't' });
    const operator = await runOperator(kube, ns);
    try {
      const lead = 60;
      // Raised 8 s from now (start - lead), lowered at the end an hour later.
      const raiseAt = Math.ceil(Date.now() / 1000) * 1000 + 8000;
      const window = { name: 'launch', start: iso(raiseAt + lead * 1000), end: iso(raiseAt + 3_600_000), replicas: 15 };
      await createPool(
        kube,
        ns,
        'spiky',
        poolSpec({
          autoscaling: { maxReplicas: 30 },
          sizing: { p95ConcurrentSessions: 5, sessionsPerReplica: 1 },
          preScaling: { leadSeconds: lead, windows: [window] },
        }),
      );
      const hpaPath = childPath('HorizontalPodAutoscaler', ns, 'spiky');
      const before = await eventually(
        () => getOrUndefined<{ spec: { minReplicas: number } }>(kube, hpaPath),
        (h) => h !== undefined,
        'HPA of spiky',
      );
      expect(before!.spec.minReplicas).toBe(6); // ceil(5 x 1.2)
      expect(Date.now()).toBeLessThan(raiseAt);
      const after = await eventually(
        () => getOrUndefined<{ spec: { minReplicas: number } }>(kube, hpaPath),
        (h) => h?.spec.minReplicas === 15,
        'HPA minimum raised by the window',
        20_000,
      );
      expect(after!.spec.minReplicas).toBe(15);
      expect(Date.now()).toBeGreaterThanOrEqual(raiseAt);
      const pool = await eventually(
        () => kube.get<VoiceWorkerPool>(poolPath(ns, 'spiky')),
        (p) => p.status?.desiredFloor === 15,
        'status floor 15',
      );
      expect(pool.status?.activeWindow).toBe('launch');
    } finally {
      await operator.stop();
    }
  });

  it('reconciles twice with the second pass changing nothing', async () => {
    const ns = await createNamespace(kube, 'twice');
    await createSecret(kube, ns, 'worker', { token: 't' });
    await createPool(
      kube,
      ns,
      'steady',
      poolSpec({ ingress: { host: 'steady.example.com', tlsSecretName: 'tls' }, autoscaling: { maxReplicas: 8 } }),
    );
    const deps = { kube, log: silentLogger, now: () => new Date(), blockedRetryMs: 1000 };
    expect(await reconcile(deps, `${ns}/steady`)).toEqual({ result: 'done' });
    const versions = async () =>
      Promise.all([
        kube.get<VoiceWorkerPool>(poolPath(ns, 'steady')).then((p) => p.metadata.resourceVersion),
        ...kinds.map((k) =>
          kube.get<{ metadata: { resourceVersion: string } }>(childPath(k, ns, 'steady')).then((o) => o.metadata.resourceVersion),
        ),
      ]);
    const first = await versions();
    expect(await reconcile(deps, `${ns}/steady`)).toEqual({ result: 'done' });
    expect(await versions()).toEqual(first);
  });

  it('requeues a blocked pool at its next window edge, so the window still applies when it unblocks', async () => {
    const ns = await createNamespace(kube, 'blocked');
    await createSecret(kube, ns, 'worker', { token: 't' });
    const now = new Date();
    const start = Math.ceil(now.getTime() / 1000) * 1000 + 3_600_000;
    await createPool(
      kube,
      ns,
      'stuck',
      poolSpec({
        ingress: { host: 'stuck.example.com', tlsSecretName: 'tls', annotations: { 'not a valid key!': 'x' } },
        preScaling: { leadSeconds: 60, windows: [{ name: 'launch', start: iso(start), end: iso(start + 3_600_000), replicas: 5 }] },
      }),
    );
    const deps = { kube, log: silentLogger, now: () => now, blockedRetryMs: 1000 };
    const outcome = await reconcile(deps, `${ns}/stuck`);
    expect(outcome).toEqual({ result: 'requeue', afterMs: start - 60_000 - now.getTime(), blocked: 'ApplyFailed' });
  });

  it('returns done for a pool that no longer exists', async () => {
    const deps = { kube, log: silentLogger, now: () => new Date(), blockedRetryMs: 1000 };
    expect(await reconcile(deps, 'default/never-created')).toEqual({ result: 'done' });
  });
});
