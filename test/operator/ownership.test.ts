/**
 * A pool never adopts what it does not own (issue 38): pools named after an admin's Service and
 * NetworkPolicy in their namespace leave both untouched, say why, and delete nothing they do not
 * control, also when a child is no longer wanted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childPath } from '../../operator/children.ts';
import type { RunningOperator } from '../../operator/controller.ts';
import type { KubeClient } from '../../operator/kube.ts';
import { poolPath } from '../../operator/reconcile.ts';
import type { KubeObject, VoiceWorkerPool } from '../../operator/types.ts';
import {
  adminClient,
  createNamespace,
  createPool,
  createSecret,
  ensureCrd,
  eventually,
  getOrUndefined,
  kubectl,
  poolSpec,
  runOperator,
} from './helpers.ts';

// Fully qualified: crd.test.ts installs another group whose pools have the short name vwp too.
const VWP = 'voiceworkerpools.voice.service.io';
let kube: KubeClient;
let ns: string;
let operator: RunningOperator;

type Obj = KubeObject & { metadata: KubeObject['metadata'] & { uid: string; resourceVersion: string }; spec: Record<string, unknown> };

beforeAll(async () => {
  kube = await adminClient();
  await ensureCrd(kube);
  ns = await createNamespace(kube, 'ownership');
  await createSecret(kube, ns, 'worker', { token: 'shared-worker-token' });
  // The workers get a NetworkPolicy of the pool's name, as with the chart's workerPods.networkPolicy.
  operator = await runOperator(kube, ns, { build: { runAsUser: 1000, networkPolicy: { metricsNamespaces: ['monitoring'] } } });
});
afterAll(async () => {
  await operator?.stop();
  kube?.close();
});

const pool = (name: string) => kube.get<VoiceWorkerPool>(poolPath(ns, name));
const condition = (p: VoiceWorkerPool, type: string) => p.status?.conditions?.find((c) => c.type === type);
const events = () =>
  kube.get<{ items: Array<{ reason: string; message: string; involvedObject: { name: string } }> }>(`/api/v1/namespaces/${ns}/events`);

const adminService = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'payments', labels: { app: 'payments' } },
  spec: { selector: { app: 'payments' }, ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] },
};
const adminPolicy = {
  apiVersion: 'networking.k8s.io/v1',
  kind: 'NetworkPolicy',
  metadata: { name: 'default-deny' },
  spec: {
    podSelector: {},
    policyTypes: ['Ingress', 'Egress'],
    egress: [
      {
        to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } } }],
        ports: [{ port: 53, protocol: 'UDP' }],
      },
    ],
  },
};

describe('a pool named after an object it does not own', () => {
  it("leaves an admin's Service untouched, refuses with NameConflict naming it, shows no endpoint, and takes the name once it is free", async () => {
    const before = await kube.request<Obj>('POST', childPath('Service', ns), { body: adminService });
    await createPool(kube, ns, 'payments', poolSpec());
    const refused = await eventually(
      () => pool('payments'),
      (p) => condition(p, 'Degraded')?.status === 'True',
      'payments refused',
    );
    expect(condition(refused, 'Degraded')).toMatchObject({
      reason: 'NameConflict',
      message: expect.stringContaining(
        `needs the Service ${ns}/payments, but an object of that name exists that this pool does not control`,
      ),
    });
    expect(condition(refused, 'Ready')).toMatchObject({ status: 'False', reason: 'NameConflict' });
    // No Service of the pool: no address in status, and none printed (the column stays empty).
    expect(refused.status?.endpoint).toBeUndefined();
    expect(await kubectl(['get', VWP, 'payments', '-n', ns])).toMatch(/payments\s+0\s+3\s+NameConflict\s+\d+s\n/);
    await eventually(
      events,
      (l) => l.items.some((e) => e.involvedObject.name === 'payments' && e.reason === 'NameConflict'),
      'a NameConflict event',
    );

    const after = (await getOrUndefined<Obj>(kube, childPath('Service', ns, 'payments')))!;
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(after.metadata.ownerReferences).toBeUndefined();
    expect(after.spec.selector).toEqual({ app: 'payments' });
    // Nothing else was applied either: the pool touches nothing while it is refused.
    expect(await getOrUndefined(kube, childPath('Deployment', ns, 'payments'))).toBeUndefined();

    // The admin removes their Service: the pool takes the name and serves.
    await kube.request('DELETE', childPath('Service', ns, 'payments'));
    const mine = await eventually(
      () => getOrUndefined<Obj>(kube, childPath('Service', ns, 'payments')),
      (s) => s?.metadata.ownerReferences?.[0]?.uid === refused.metadata.uid,
      "the pool's own Service",
    );
    expect(mine!.spec.selector).toMatchObject({ 'voice.service.io/pool': 'payments' });
    const served = await eventually(
      () => pool('payments'),
      (p) => condition(p, 'Degraded')?.status === 'False',
      'payments applied',
    );
    expect(served.status?.endpoint).toBe(`http://payments.${ns}.svc:443/`);
  });

  it("leaves an admin's NetworkPolicy untouched (its egress rule and its podSelector), and the pool's deletion cannot take it along", async () => {
    const before = await kube.request<Obj>('POST', childPath('NetworkPolicy', ns), { body: adminPolicy });
    const created = await createPool(kube, ns, 'default-deny', poolSpec());
    const refused = await eventually(
      () => pool('default-deny'),
      (p) => condition(p, 'Degraded')?.reason === 'NameConflict',
      'default-deny refused',
    );
    expect(condition(refused, 'Degraded')?.message).toContain(`NetworkPolicy ${ns}/default-deny`);
    const after = (await getOrUndefined<Obj>(kube, childPath('NetworkPolicy', ns, 'default-deny')))!;
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(after.spec).toMatchObject({ podSelector: {}, policyTypes: ['Ingress', 'Egress'], egress: adminPolicy.spec.egress });
    // Without an owner reference to the pool the garbage collector leaves it when the pool goes.
    expect(after.metadata.ownerReferences ?? []).not.toContainEqual(expect.objectContaining({ uid: created.metadata.uid }));
    expect(await getOrUndefined(kube, childPath('Service', ns, 'default-deny'))).toBeUndefined();
  });

  it('deletes, among children it no longer wants, only those it controls', async () => {
    const created = await createPool(kube, ns, 'lean', poolSpec({ replicas: 2, autoscaling: { enabled: false } }));
    await eventually(
      () => pool('lean'),
      (p) => condition(p, 'Degraded')?.status === 'False',
      'lean applied',
    );
    // An HPA of the pool's name, labelled like the operator's and naming the pool as an owner, but
    // not as its controller: someone else's object, which the cleanup of an unwanted HPA must spare.
    const hpa = {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: {
        name: 'lean',
        labels: { 'app.kubernetes.io/managed-by': 'voice-operator' },
        ownerReferences: [{ apiVersion: 'voice.service.io/v1beta1', kind: 'VoiceWorkerPool', name: 'lean', uid: created.metadata.uid }],
      },
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'lean' }, minReplicas: 2, maxReplicas: 4 },
    };
    await kube.request('POST', childPath('HorizontalPodAutoscaler', ns), { body: hpa });
    // A new generation: a full pass, whose cleanup looks at the HPA the pool does not want.
    await kube.mergePatch(poolPath(ns, 'lean'), { spec: { maxSessionSeconds: 900 } });
    await eventually(
      () => pool('lean'),
      (p) => p.status?.observedGeneration === 2,
      'generation 2 of lean',
    );
    // And one more pass after the informer surely holds the HPA (a pod-less pool is quiet otherwise).
    await kube.mergePatch(poolPath(ns, 'lean'), { spec: { maxSessionSeconds: 1200 } });
    await eventually(
      () => pool('lean'),
      (p) => p.status?.observedGeneration === 3,
      'generation 3 of lean',
    );
    expect(await getOrUndefined(kube, childPath('HorizontalPodAutoscaler', ns, 'lean'))).toBeDefined();
  });
});
