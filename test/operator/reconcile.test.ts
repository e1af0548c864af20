/**
 * The operator against a real API server: children with the right fields, drift repaired, status
 * and conditions, Degraded with an Event, and the HPA owning the replica count.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childPath } from '../../operator/children.ts';
import type { RunningOperator } from '../../operator/controller.ts';
import type { KubeClient } from '../../operator/kube.ts';
import { poolPath } from '../../operator/reconcile.ts';
import { FIELD_MANAGER, type KubeObject, type VoiceWorkerPool } from '../../operator/types.ts';
import { adminClient, createNamespace, createPool, createSecret, ensureCrd, eventually, getOrUndefined, kubectl, poolSpec, runOperator } from './helpers.ts';

let kube: KubeClient;
let ns: string;
let operator: RunningOperator;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- assertions read deep into API objects
type Obj = KubeObject & { spec: Record<string, any>; status?: Record<string, any>; metadata: KubeObject['metadata'] & { uid: string; resourceVersion: string } };

beforeAll(async () => {
  kube = await adminClient();
  await ensureCrd(kube);
  ns = await createNamespace(kube, 'reconcile');
  await createSecret(kube, ns, 'worker', { token: 'shared-worker-token' });
  await createSecret(kube, ns, 'providers', { llm: 'k1', stt: 'k2', tts: 'k3', daily: 'k4' });
  operator = await runOperator(kube, ns);
});
afterAll(async () => {
  await operator?.stop();
  kube?.close();
});

const get = (kind: Parameters<typeof childPath>[0], name: string) => getOrUndefined<Obj>(kube, childPath(kind, ns, name));
const pool = (name: string) => kube.get<VoiceWorkerPool>(poolPath(ns, name));
const condition = (p: VoiceWorkerPool, type: string) => p.status?.conditions?.find((c) => c.type === type);

const fullSpec = poolSpec({
  ingress: { host: 'voice.example.com', tlsSecretName: 'voice-tls', className: 'nginx', annotations: { 'nginx.ingress.kubernetes.io/proxy-read-timeout': '3600' } },
  autoscaling: { minReplicas: 2, maxReplicas: 20 },
  sizing: { p95ConcurrentSessions: 10, headroomPercent: 20, sessionsPerReplica: 2 },
  secrets: {
    workerToken: { name: 'worker' },
    llmApiKey: { name: 'providers', key: 'llm' },
    sttApiKey: { name: 'providers', key: 'stt' },
    ttsApiKey: { name: 'providers', key: 'tts' },
    roomApiKey: { name: 'providers', key: 'daily' },
  },
  telemetry: { otlpEndpoint: 'http://otel:4318' },
});

describe('reconcile against a real API server', () => {
  it('creates the five children with the right fields and owner references', async () => {
    const created = await createPool(kube, ns, 'main', fullSpec);
    const deployment = await eventually(() => get('Deployment', 'main'), (d) => d !== undefined, 'Deployment main');
    const [service, ingress, hpa, pdb] = await eventually(
      () => Promise.all([get('Service', 'main'), get('Ingress', 'main'), get('HorizontalPodAutoscaler', 'main'), get('PodDisruptionBudget', 'main')]),
      (all) => all.every((o) => o !== undefined),
      'Service, Ingress, HPA and PDB of main',
    );
    for (const child of [deployment!, service!, ingress!, hpa!, pdb!]) {
      expect(child.metadata.ownerReferences).toEqual([{ apiVersion: 'voice.service.io/v1alpha1', kind: 'VoiceWorkerPool', name: 'main', uid: created.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    }
    const container = deployment!.spec.template.spec.containers[0];
    expect(container.image).toBe('registry.example.com/voice-worker:v1.3.0');
    expect(container.ports).toEqual([{ name: 'http', containerPort: 7860, protocol: 'TCP' }]);
    expect(container.readinessProbe.httpGet).toMatchObject({ path: '/readyz', port: 'http' });
    expect(container.livenessProbe.httpGet).toMatchObject({ path: '/healthz', port: 'http' });
    expect(container.resources).toEqual({ requests: { cpu: '2', memory: '4Gi' }, limits: { cpu: '4', memory: '8Gi' } });
    expect(container.securityContext).toMatchObject({ allowPrivilegeEscalation: false, runAsNonRoot: true, capabilities: { drop: ['ALL'] } });
    expect(container.lifecycle.preStop.exec.command).toEqual(['/bin/sh', '-c', 'sleep 10']);
    const env = Object.fromEntries(container.env.map((e: { name: string; value?: string; valueFrom?: unknown }) => [e.name, e.value ?? e.valueFrom]));
    expect(env).toMatchObject({
      PORT: '7860',
      WORKER_TOKEN: { secretKeyRef: { name: 'worker', key: 'token' } },
      LLM_API_KEY: { secretKeyRef: { name: 'providers', key: 'llm' } },
      DAILY_API_KEY: { secretKeyRef: { name: 'providers', key: 'daily' } },
      REDIS_URL: 'redis://redis:6379',
      BACKEND_URL: 'https://app.service.example',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318',
      OTEL_SERVICE_NAME: 'voice-worker',
    });
    expect(JSON.stringify(container.env)).not.toContain('shared-worker-token');
    expect(deployment!.spec.template.spec.terminationGracePeriodSeconds).toBe(1800);
    expect(deployment!.spec.template.spec.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(deployment!.spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: '25%' } });
    // ceil(10 x 1.2 / 2) = 6: the HPA minimum, and the new Deployment's first replica count.
    expect(hpa!.spec).toMatchObject({ minReplicas: 6, maxReplicas: 20, scaleTargetRef: { kind: 'Deployment', name: 'main' } });
    expect(hpa!.spec.metrics[0].resource).toEqual({ name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } });
    expect(service!.spec.ports).toEqual([{ name: 'https', port: 443, targetPort: 'http', protocol: 'TCP' }]);
    expect(ingress!.spec).toMatchObject({ ingressClassName: 'nginx', tls: [{ hosts: ['voice.example.com'], secretName: 'voice-tls' }] });
    expect(ingress!.spec.rules[0].http.paths[0].backend).toEqual({ service: { name: 'main', port: { number: 443 } } });
    expect(ingress!.metadata.annotations).toMatchObject({ 'nginx.ingress.kubernetes.io/proxy-read-timeout': '3600' });
    expect(pdb!.spec).toMatchObject({ maxUnavailable: 1 });
    const replicas = await eventually(() => get('Deployment', 'main'), (d) => d?.spec.replicas === 6, 'Deployment replicas at the floor');
    expect(replicas!.spec.replicas).toBe(6);
  });

  it('reports status honestly: not Ready while no worker is ready, Ready once they are', async () => {
    const notReady = await eventually(() => pool('main'), (p) => condition(p, 'Ready') !== undefined, 'status of main');
    expect(notReady.status).toMatchObject({ observedGeneration: 1, readyReplicas: 0, desiredFloor: 6, endpoint: 'https://voice.example.com/' });
    expect(condition(notReady, 'Ready')).toMatchObject({ status: 'False', reason: 'ReplicasNotReady', observedGeneration: 1 });
    expect(condition(notReady, 'Progressing')).toMatchObject({ status: 'True', reason: 'RollingOut' });
    expect(condition(notReady, 'Degraded')).toMatchObject({ status: 'False', reason: 'AsExpected' });
    // No controllers run here: play the Deployment controller and report six ready workers.
    await kube.mergePatch(childPath('Deployment', ns, 'main', ) + '/status', { status: { replicas: 6, updatedReplicas: 6, readyReplicas: 6, availableReplicas: 6 } });
    const ready = await eventually(() => pool('main'), (p) => condition(p, 'Ready')?.status === 'True', 'main to become Ready');
    expect(ready.status?.readyReplicas).toBe(6);
    expect(condition(ready, 'Progressing')).toMatchObject({ status: 'False', reason: 'RolloutComplete' });
  });

  it('repairs drift: a deleted child comes back and an edited field is restored', async () => {
    const before = (await get('Service', 'main'))!;
    await kube.request('DELETE', childPath('Service', ns, 'main'));
    const back = await eventually(() => get('Service', 'main'), (s) => s !== undefined && s.metadata.uid !== before.metadata.uid, 'Service main recreated');
    expect(back!.spec.ports[0]).toMatchObject({ port: 443, targetPort: 'http' });

    await kubectl(['-n', ns, 'set', 'image', 'deployment/main', 'worker=attacker/image:latest']);
    const restored = await eventually(() => get('Deployment', 'main'), (d) => d?.spec.template.spec.containers[0].image === 'registry.example.com/voice-worker:v1.3.0', 'image restored');
    expect(restored!.metadata.ownerReferences).toHaveLength(1);
  });

  it('leaves the replica count to the HPA', async () => {
    // The HPA controller scales with an update of its own; the operator must not set it back.
    await kubectl(['-n', ns, 'scale', 'deployment/main', '--replicas=9']);
    await kube.mergePatch(poolPath(ns, 'main'), { spec: { warmPoolSize: 3 } }); // a new generation: a full reconcile
    await eventually(() => pool('main'), (p) => p.status?.observedGeneration === 2, 'generation 2 observed');
    const d = await eventually(() => get('Deployment', 'main'), (x) => x?.spec.template.spec.containers[0].env.some((e: { name: string; value: string }) => e.name === 'WARM_POOL_SIZE' && e.value === '3'), 'new env applied');
    expect(d!.spec.replicas).toBe(9);
  });

  it('turns autoscaling off: the HPA goes and the operator sets the replicas itself', async () => {
    await kube.mergePatch(poolPath(ns, 'main'), { spec: { autoscaling: { enabled: false }, replicas: 4 } });
    await eventually(() => get('HorizontalPodAutoscaler', 'main'), (h) => h === undefined, 'HPA removed');
    // The floor from sizing (6) is above spec.replicas (4).
    const d = await eventually(() => get('Deployment', 'main'), (x) => x?.spec.replicas === 6, 'replicas set to the floor');
    expect((d!.metadata.managedFields as Array<{ manager?: string }>).some((m) => m.manager === FIELD_MANAGER)).toBe(true);
  });

  it('turns autoscaling on: the HPA takes over the current count, which is not reset to 1', async () => {
    await createPool(kube, ns, 'fixed', poolSpec({ replicas: 4 }));
    await eventually(() => get('Deployment', 'fixed'), (d) => d?.spec.replicas === 4, 'fixed at 4 replicas');
    await kube.mergePatch(poolPath(ns, 'fixed'), { spec: { autoscaling: { minReplicas: 2, maxReplicas: 10 } } });
    const hpa = await eventually(() => get('HorizontalPodAutoscaler', 'fixed'), (h) => h !== undefined, 'HPA created');
    expect(hpa!.spec).toMatchObject({ minReplicas: 2, maxReplicas: 10 });
    await eventually(() => pool('fixed'), (p) => p.status?.observedGeneration === 2, 'generation 2 observed');
    const d = (await get('Deployment', 'fixed'))!;
    expect(d.spec.replicas).toBe(4);
    const owners = (d.metadata.managedFields as Array<{ manager: string; fieldsV1?: { 'f:spec'?: Record<string, unknown> } }>)
      .filter((m) => m.fieldsV1?.['f:spec']?.['f:replicas'] !== undefined)
      .map((m) => m.manager);
    expect(owners).toEqual(['voice-operator-initial-replicas']);
  });

  it('marks a pool whose Secret is missing Degraded, with an Event, and recovers when it appears', async () => {
    await createPool(kube, ns, 'nosecret', poolSpec({ secrets: { workerToken: { name: 'later' } } }));
    const degraded = await eventually(() => pool('nosecret'), (p) => condition(p, 'Degraded')?.status === 'True', 'nosecret Degraded');
    expect(condition(degraded, 'Degraded')).toMatchObject({ reason: 'SecretNotFound', message: `Secret ${ns}/later named by spec.secrets.workerToken does not exist; create it or fix spec.secrets.workerToken.name` });
    expect(condition(degraded, 'Ready')).toMatchObject({ status: 'False', reason: 'Blocked' });
    expect(await get('Deployment', 'nosecret')).toBeUndefined();
    const events = await eventually(
      () => kube.get<{ items: Array<{ reason: string; type: string; involvedObject: { name: string } }> }>(`/api/v1/namespaces/${ns}/events`),
      (list) => list.items.some((e) => e.involvedObject.name === 'nosecret' && e.reason === 'SecretNotFound'),
      'a SecretNotFound event',
    );
    expect(events.items.find((e) => e.reason === 'SecretNotFound')?.type).toBe('Warning');

    await createSecret(kube, ns, 'later', { wrong: 'x' });
    await eventually(() => pool('nosecret'), (p) => condition(p, 'Degraded')?.reason === 'SecretKeyNotFound', 'SecretKeyNotFound');
    await kube.mergePatch(`/api/v1/namespaces/${ns}/secrets/later`, { data: { token: Buffer.from('t').toString('base64') } });
    await eventually(() => pool('nosecret'), (p) => condition(p, 'Degraded')?.status === 'False', 'nosecret recovered', 15_000);
    expect(await get('Deployment', 'nosecret')).toBeDefined();
  });

  it('marks a floor above autoscaling.maxReplicas as an invalid spec, without crashing', async () => {
    await createPool(kube, ns, 'toosmall', poolSpec({ autoscaling: { maxReplicas: 3 }, sizing: { p95ConcurrentSessions: 10 } }));
    const p = await eventually(() => pool('toosmall'), (x) => condition(x, 'Degraded')?.status === 'True', 'toosmall Degraded');
    expect(condition(p, 'Degraded')?.reason).toBe('InvalidSpec');
    expect(condition(p, 'Degraded')?.message).toContain('the replica floor 12 (sizing 12) exceeds spec.autoscaling.maxReplicas 3');
    expect(operator.isLeader()).toBe(true);
  });

  it('removes the Ingress when the pool no longer asks for one, and reports the in-cluster endpoint', async () => {
    await kube.mergePatch(poolPath(ns, 'main'), { spec: { ingress: null } });
    await eventually(() => get('Ingress', 'main'), (i) => i === undefined, 'Ingress removed');
    const p = await eventually(() => pool('main'), (x) => x.status?.endpoint === `https://main.${ns}.svc:443/`, 'endpoint of the Service');
    expect(condition(p, 'Degraded')?.status).toBe('False');
  });

  it('marks a child the API server refuses as ApplyFailed, naming the cause', async () => {
    await createPool(kube, ns, 'refused', poolSpec({ ingress: { host: 'refused.example.com', tlsSecretName: 'tls', annotations: { 'not a valid key!': 'x' } } }));
    const p = await eventually(() => pool('refused'), (x) => condition(x, 'Degraded')?.status === 'True', 'refused Degraded');
    expect(condition(p, 'Degraded')?.reason).toBe('ApplyFailed');
    expect(condition(p, 'Degraded')?.message).toMatch(/VoiceWorkerPool refused: a child was rejected: .*ingresses\/refused: 422 .*not a valid key!/);
    expect(operator.isLeader()).toBe(true);
  });

  it('serves metrics and probes', async () => {
    const metrics = await (await fetch(`http://127.0.0.1:${operator.port}/metrics`)).text();
    expect(metrics).toMatch(/controller_runtime_reconcile_total\{controller="voiceworkerpool",result="success"\} [1-9]/);
    expect(metrics).toContain('controller_runtime_reconcile_time_seconds_bucket');
    expect(metrics).toContain('workqueue_depth{name="voiceworkerpool"}');
    expect(metrics).toContain('voice_operator_leader 1');
    expect(metrics).toMatch(/voice_operator_watch_lifecycle_total\{resource="voiceworkerpools",event="listed"\} [1-9]/);
    expect(metrics).toMatch(/controller_runtime_reconcile_total\{controller="voiceworkerpool",result="requeue_after"\} [1-9]/);
    expect((await fetch(`http://127.0.0.1:${operator.port}/healthz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${operator.port}/readyz`)).status).toBe(200);
  });
});
