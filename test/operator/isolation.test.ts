/**
 * Bounded work and isolated failures (issue 38) against a real API server: what the CRD refuses
 * outright, a schedule-heavy pool reconciled in one short pass, a refused child that is terminal,
 * and slow pools cut off at their deadline and marked while the others are reconciled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childPath } from '../../operator/children.ts';
import type { RunningOperator } from '../../operator/controller.ts';
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
let ns: string;
let operator: RunningOperator;

beforeAll(async () => {
  kube = await adminClient();
  await ensureCrd(kube);
  ns = await createNamespace(kube, 'isolation');
  await createSecret(kube, ns, 'worker', { token: 'shared-worker-token' });
  operator = await runOperator(kube, ns);
});
afterAll(async () => {
  await operator?.stop();
  kube?.close();
});

const pool = (namespace: string, name: string) => kube.get<VoiceWorkerPool>(poolPath(namespace, name));
const condition = (p: VoiceWorkerPool, type: string) => p.status?.conditions?.find((c) => c.type === type);
let attempts = 0;
const rejection = async (spec: Record<string, unknown>): Promise<string> => {
  try {
    await createPool(kube, ns, `refused-${++attempts}`, spec);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('the API server accepted the pool');
};

describe('what a spec may hold', () => {
  it('refuses the 1.28 MB pool (64 extraEnv values of 20 KB, 64 tolerations) that took both replicas down', async () => {
    const env = Array.from({ length: 64 }, (_, i) => ({ name: `BIG_${i}`, value: 'x'.repeat(20_000) }));
    const tolerations = Array.from({ length: 64 }, (_, i) => ({ key: `k${i}`, operator: 'Exists', effect: 'NoSchedule' }));
    expect(await rejection(poolSpec({ extraEnv: env, placement: { tolerations } }))).toMatch(
      /spec\.extraEnv: Too many: 64: must have at most 32 items/,
    );
    expect(await rejection(poolSpec({ extraEnv: env.slice(0, 1) }))).toMatch(
      /spec\.extraEnv\[0\]\.value: Too long: may not be (longer|more) than 8192/,
    );
    expect(await rejection(poolSpec({ placement: { tolerations } }))).toMatch(
      /spec\.placement\.tolerations: Too many: 64: must have at most 16 items/,
    );
  });

  it('refuses Secret names that are paths, not names (. and ..)', async () => {
    for (const name of ['.', '..']) {
      const message = await rejection(poolSpec({ secrets: { workerToken: { name } } }));
      expect(message).toContain('spec.secrets.workerToken.name');
      expect(message).toMatch(/should match/);
    }
  });

  it('accepts the largest pool the limits allow, well under what the API server stores', async () => {
    const spec = poolSpec({
      extraEnv: Array.from({ length: 32 }, (_, i) => ({ name: `BIG_${i}`, value: 'x'.repeat(8192) })),
      placement: { tolerations: Array.from({ length: 16 }, (_, i) => ({ key: `k${i}`, operator: 'Exists', effect: 'NoSchedule' })) },
    });
    expect(JSON.stringify(spec).length).toBeLessThan(300_000);
    await createPool(kube, ns, 'largest', spec);
    const p = await eventually(
      () => pool(ns, 'largest'),
      (x) => x.status?.observedGeneration === 1,
      'largest reconciled',
    );
    expect(condition(p, 'Degraded')?.status).toBe('False');
  });
});

describe('one pass per pool, bounded', () => {
  it('reconciles 20 schedules of every minute for a week (it used to overflow the stack), and the pool beside it', async () => {
    const schedules = Array.from({ length: 20 }, (_, i) => ({
      name: `every-${i}`,
      cron: '* * * * *',
      timeZone: i % 2 ? 'Europe/Berlin' : 'UTC',
      durationMinutes: 10_080,
      replicas: 1 + i,
    }));
    await createPool(kube, ns, 'every-minute', poolSpec({ preScaling: { leadSeconds: 300, schedules } }));
    await createPool(kube, ns, 'beside', poolSpec());
    const p = await eventually(
      () => pool(ns, 'every-minute'),
      (x) => x.status?.desiredFloor === 20,
      'every-minute reconciled',
    );
    expect(p.status?.activeWindow?.split(',')).toHaveLength(20);
    expect(Date.parse(p.status!.nextBoundary!) - Date.now()).toBeLessThanOrEqual(61_000);
    expect(condition(p, 'Degraded')?.status).toBe('False');
    await eventually(
      () => pool(ns, 'beside'),
      (x) => x.status?.observedGeneration === 1,
      'beside reconciled',
    );
    expect(operator.isLeader()).toBe(true);
  });

  it("takes a child refused with 500 for a field of the wrong type as terminal, with the server's message", async () => {
    await createPool(kube, ns, 'wrong-type', poolSpec({ placement: { affinity: { nodeAffinity: 'everywhere' } } }));
    const p = await eventually(
      () => pool(ns, 'wrong-type'),
      (x) => condition(x, 'Degraded')?.status === 'True',
      'wrong-type Degraded',
    );
    expect(condition(p, 'Degraded')?.reason).toBe('ApplyFailed');
    expect(condition(p, 'Degraded')?.message).toMatch(/a child was rejected: .*deployments\/wrong-type: 500 .*nodeAffinity/);
    expect(condition(p, 'Degraded')?.message).not.toContain('retrying');
    expect(await getOrUndefined(kube, childPath('Deployment', ns, 'wrong-type'))).toBeUndefined();
  });
});

describe('a slow pool', () => {
  it('is cut off at the reconcile deadline and marked, while the pools beside it are reconciled', async () => {
    const slowNs = await createNamespace(kube, 'slow');
    await createSecret(kube, slowNs, 'worker', { token: 'shared-worker-token' });
    await createSecret(kube, slowNs, 'stuck', { token: 'shared-worker-token' });
    const proxy = await startApiProxy(kubeInfo().adminKubeconfig);
    const behind = await KubeClient.fromKubeConfig(proxy.kubeconfig);
    // Every read of the Secret `stuck` hangs, as against an API server that never answers it.
    proxy.hold(new RegExp(`^GET /api/v1/namespaces/${slowNs}/secrets/stuck`));
    const slow = await runOperator(behind, slowNs, { workers: 2, reconcileTimeoutMs: 1500 });
    try {
      const stuck = poolSpec({ secrets: { workerToken: { name: 'stuck' } } });
      for (let i = 0; i < 6; i++) await createPool(kube, slowNs, `stuck-${i}`, stuck);
      await createPool(kube, slowNs, 'healthy', poolSpec());
      await eventually(
        () => pool(slowNs, 'healthy'),
        (x) => x.status?.observedGeneration === 1,
        'healthy reconciled',
        30_000,
      );
      const p = await eventually(
        () => pool(slowNs, 'stuck-0'),
        (x) => condition(x, 'Degraded')?.reason === 'ReconcileTimedOut',
        'stuck-0 marked',
        30_000,
      );
      expect(condition(p, 'Degraded')?.message).toMatch(
        /VoiceWorkerPool stuck-0: the reconcile was cut off \(retrying with backoff\): the reconcile did not finish within 1.5 s/,
      );
      const events = await kube.get<{ items: Array<{ reason: string; involvedObject: { name: string } }> }>(
        `/api/v1/namespaces/${slowNs}/events`,
      );
      expect(events.items.some((e) => e.reason === 'ReconcileTimedOut' && e.involvedObject.name === 'stuck-0')).toBe(true);
      expect(slow.isLeader()).toBe(true);
      const metrics = await (await fetch(`http://127.0.0.1:${slow.port}/metrics`)).text();
      expect(metrics).toMatch(/voice_operator_reconcile_timeouts_total\{controller="voiceworkerpool"\} [1-9]/);
    } finally {
      proxy.heal();
      await slow.stop();
      behind.close();
      await proxy.close();
    }
  });
});
