/**
 * The operator against a real API server: children with the right fields, drift repaired, status
 * and conditions, Degraded with an Event, and the HPA owning the replica count.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSessionsPerReplica } from '../../operator/capacity.ts';
import { childPath } from '../../operator/children.ts';
import type { RunningOperator } from '../../operator/controller.ts';
import type { KubeClient } from '../../operator/kube.ts';
import { poolPath } from '../../operator/reconcile.ts';
import { FIELD_MANAGER, type KubeObject, type VoiceWorkerPool } from '../../operator/types.ts';
import { createLogger } from '../../lib/log.ts';
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

let kube: KubeClient;
let ns: string;
let operator: RunningOperator;

/* eslint-disable @typescript-eslint/no-explicit-any -- assertions read deep into API objects */
type Obj = KubeObject & {
  spec: Record<string, any>;
  status?: Record<string, any>;
  metadata: KubeObject['metadata'] & { uid: string; resourceVersion: string };
};
/* eslint-enable @typescript-eslint/no-explicit-any */

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
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const condition = (p: VoiceWorkerPool, type: string) => p.status?.conditions?.find((c) => c.type === type);

const fullSpec = poolSpec({
  roomProvider: 'daily',
  ingress: {
    host: 'voice.example.com',
    tlsSecretName: 'voice-tls',
    className: 'nginx',
    annotations: { 'nginx.ingress.kubernetes.io/proxy-read-timeout': '3600' },
  },
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
    const deployment = await eventually(
      () => get('Deployment', 'main'),
      (d) => d !== undefined,
      'Deployment main',
    );
    const [service, ingress, hpa, pdb] = await eventually(
      () =>
        Promise.all([
          get('Service', 'main'),
          get('Ingress', 'main'),
          get('HorizontalPodAutoscaler', 'main'),
          get('PodDisruptionBudget', 'main'),
        ]),
      (all) => all.every((o) => o !== undefined),
      'Service, Ingress, HPA and PDB of main',
    );
    for (const child of [deployment!, service!, ingress!, hpa!, pdb!]) {
      expect(child.metadata.ownerReferences).toEqual([
        {
          apiVersion: 'voice.service.io/v1beta1',
          kind: 'VoiceWorkerPool',
          name: 'main',
          uid: created.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
    }
    const container = deployment!.spec.template.spec.containers[0];
    expect(container.image).toBe('registry.example.com/voice-worker:v1.3.0');
    expect(container.ports).toEqual([
      { name: 'http', containerPort: 7860, protocol: 'TCP' },
      { name: 'metrics', containerPort: 9090, protocol: 'TCP' },
    ]);
    expect(container.readinessProbe.httpGet).toMatchObject({ path: '/readyz', port: 'metrics' });
    expect(container.livenessProbe.httpGet).toMatchObject({ path: '/healthz', port: 'metrics' });
    expect(deployment!.spec.template.spec.automountServiceAccountToken).toBe(false);
    expect(container.resources).toEqual({
      requests: { cpu: '2', memory: '4Gi', 'ephemeral-storage': '1Gi' },
      limits: { cpu: '4', memory: '8Gi', 'ephemeral-storage': '6Gi' },
    });
    expect(container.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(container.lifecycle.preStop.exec.command).toEqual(['/bin/sh', '-c', 'sleep 10']);
    const env = Object.fromEntries(
      container.env.map((e: { name: string; value?: string; valueFrom?: unknown }) => [e.name, e.value ?? e.valueFrom]),
    );
    expect(env).toMatchObject({
      PORT: '7860',
      WORKER_TOKEN: { secretKeyRef: { name: 'worker', key: 'token' } },
      LLM_API_KEY: { secretKeyRef: { name: 'providers', key: 'llm' } },
      DAILY_API_KEY: { secretKeyRef: { name: 'providers', key: 'daily' } },
      REDIS_URL: 'redis://redis:6379',
      BACKEND_URL: 'https://app.service.example',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318',
      OTEL_SERVICE_NAME: 'voice-worker',
      PUBLIC_URL: 'https://voice.example.com',
      REDIS_KEY_PREFIX: `voice:${ns}:main`,
      DRAIN_GRACE_SECONDS: '1780',
      WARM_POOL_SIZE: '2', // sizing.sessionsPerReplica
      METRICS_PORT: '9090',
      ROOM_PROVIDER: 'daily',
    });
    expect(JSON.stringify(container.env)).not.toContain('shared-worker-token');
    expect(deployment!.spec.template.spec.terminationGracePeriodSeconds).toBe(1800);
    expect(deployment!.spec.template.spec.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(deployment!.spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: '25%' } });
    // ceil(10 x 1.2 / 2) = 6: the HPA minimum, and the new Deployment's first replica count.
    expect(hpa!.spec).toMatchObject({ minReplicas: 6, maxReplicas: 20, scaleTargetRef: { kind: 'Deployment', name: 'main' } });
    expect(hpa!.spec.metrics[0].resource).toEqual({ name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } });
    expect(service!.spec.ports).toEqual([{ name: 'http', port: 443, targetPort: 'http', protocol: 'TCP', appProtocol: 'http' }]);
    expect(ingress!.spec).toMatchObject({ ingressClassName: 'nginx', tls: [{ hosts: ['voice.example.com'], secretName: 'voice-tls' }] });
    expect(ingress!.spec.rules[0].http.paths[0].backend).toEqual({ service: { name: 'main', port: { number: 443 } } });
    expect(ingress!.metadata.annotations).toMatchObject({ 'nginx.ingress.kubernetes.io/proxy-read-timeout': '3600' });
    expect(pdb!.spec).toMatchObject({ maxUnavailable: 1 });
    const replicas = await eventually(
      () => get('Deployment', 'main'),
      (d) => d?.spec.replicas === 6,
      'Deployment replicas at the floor',
    );
    expect(replicas!.spec.replicas).toBe(6);
  });

  it('reports status honestly: not Ready while no worker is ready, Ready once they are', async () => {
    const notReady = await eventually(
      () => pool('main'),
      (p) => condition(p, 'Ready') !== undefined,
      'status of main',
    );
    expect(notReady.status).toMatchObject({
      observedGeneration: 1,
      readyReplicas: 0,
      desiredFloor: 6,
      endpoint: 'https://voice.example.com/',
    });
    expect(condition(notReady, 'Ready')).toMatchObject({ status: 'False', reason: 'ReplicasNotReady', observedGeneration: 1 });
    expect(condition(notReady, 'Progressing')).toMatchObject({ status: 'True', reason: 'RollingOut' });
    expect(condition(notReady, 'Degraded')).toMatchObject({ status: 'False', reason: 'AsExpected' });
    // No controllers run here: play the Deployment controller. Counts that look done, but from a
    // controller that has not observed the latest generation: still rolling out.
    const generation = (await get('Deployment', 'main'))!.metadata.generation as number;
    const statusPath = childPath('Deployment', ns, 'main') + '/status';
    await kube.mergePatch(statusPath, {
      status: { observedGeneration: generation - 1, replicas: 6, updatedReplicas: 6, readyReplicas: 6, availableReplicas: 6 },
    });
    const stale = await eventually(
      () => pool('main'),
      (p) => condition(p, 'Ready')?.status === 'True',
      'main Ready on available workers',
    );
    expect(condition(stale, 'Progressing')).toMatchObject({
      status: 'True',
      reason: 'RollingOut',
      message: `Deployment main: waiting for the Deployment controller to observe generation ${generation}`,
    });
    await kube.mergePatch(statusPath, { status: { observedGeneration: generation } });
    const ready = await eventually(
      () => pool('main'),
      (p) => condition(p, 'Progressing')?.status === 'False',
      'rollout complete',
    );
    expect(ready.status?.readyReplicas).toBe(6);
    expect(condition(ready, 'Progressing')).toMatchObject({ status: 'False', reason: 'RolloutComplete' });
    expect(condition(ready, 'Ready')).toMatchObject({
      status: 'True',
      reason: 'ReplicasReady',
      message: '6/6 workers of main are available',
    });
  });

  it('keeps Ready while the HPA scales up above the floor', async () => {
    // The HPA asked for 9: three new pods start; the six of the floor stay available.
    await kubectl(['-n', ns, 'scale', 'deployment/main', '--replicas=9']);
    const generation = (await get('Deployment', 'main'))!.metadata.generation as number;
    await kube.mergePatch(childPath('Deployment', ns, 'main') + '/status', {
      status: { observedGeneration: generation, replicas: 9, updatedReplicas: 9, readyReplicas: 6, availableReplicas: 6 },
    });
    const p = await eventually(
      () => pool('main'),
      (x) => condition(x, 'Progressing')?.status === 'True',
      'scale-up seen',
    );
    expect(condition(p, 'Ready')).toMatchObject({ status: 'True', reason: 'ReplicasReady' });
    await kube.mergePatch(childPath('Deployment', ns, 'main') + '/status', { status: { readyReplicas: 9, availableReplicas: 9 } });
    await eventually(
      () => pool('main'),
      (x) => condition(x, 'Progressing')?.status === 'False',
      'scale-up done',
    );
  });

  it('warns with a condition and an Event that transcripts on an emptyDir are lost with the pod', async () => {
    const p = await eventually(
      () => pool('main'),
      (x) => condition(x, 'TranscriptsDurable') !== undefined,
      'transcript condition',
    );
    expect(condition(p, 'TranscriptsDurable')).toMatchObject({ status: 'False', reason: 'EphemeralTranscriptStore' });
    await eventually(
      () =>
        kube.get<{ items: Array<{ reason: string; type: string; involvedObject: { name: string } }> }>(`/api/v1/namespaces/${ns}/events`),
      (list) => list.items.some((e) => e.involvedObject.name === 'main' && e.reason === 'EphemeralTranscriptStore' && e.type === 'Warning'),
      'an EphemeralTranscriptStore warning',
    );
    await createPool(kube, ns, 'durable', poolSpec({ transcriptStore: 's3://transcripts/voice' }));
    const durable = await eventually(
      () => pool('durable'),
      (x) => condition(x, 'TranscriptsDurable') !== undefined,
      'durable status',
    );
    expect(condition(durable, 'TranscriptsDurable')).toMatchObject({ status: 'True', reason: 'ObjectStore' });
  });

  it('repairs drift: a deleted child comes back and an edited field is restored', async () => {
    const before = (await get('Service', 'main'))!;
    await kube.request('DELETE', childPath('Service', ns, 'main'));
    const back = await eventually(
      () => get('Service', 'main'),
      (s) => s !== undefined && s.metadata.uid !== before.metadata.uid,
      'Service main recreated',
    );
    expect(back!.spec.ports[0]).toMatchObject({ port: 443, targetPort: 'http' });

    await kubectl(['-n', ns, 'set', 'image', 'deployment/main', 'worker=attacker/image:latest']);
    const restored = await eventually(
      () => get('Deployment', 'main'),
      (d) => d?.spec.template.spec.containers[0].image === 'registry.example.com/voice-worker:v1.3.0',
      'image restored',
    );
    expect(restored!.metadata.ownerReferences).toHaveLength(1);
  });

  it('leaves the replica count to the HPA', async () => {
    // The HPA controller scales with an update of its own; the operator must not set it back.
    await kubectl(['-n', ns, 'scale', 'deployment/main', '--replicas=9']);
    await kube.mergePatch(poolPath(ns, 'main'), { spec: { maxSessionSeconds: 900 } }); // a new generation: a full reconcile
    await eventually(
      () => pool('main'),
      (p) => p.status?.observedGeneration === 2,
      'generation 2 observed',
    );
    const d = await eventually(
      () => get('Deployment', 'main'),
      (x) =>
        x?.spec.template.spec.containers[0].env.some(
          (e: { name: string; value: string }) => e.name === 'MAX_SESSION_SECONDS' && e.value === '900',
        ),
      'new env applied',
    );
    expect(d!.spec.replicas).toBe(9);
  });

  it('turns autoscaling off: the HPA goes and the operator sets the replicas itself', async () => {
    await kube.mergePatch(poolPath(ns, 'main'), { spec: { autoscaling: { enabled: false }, replicas: 4 } });
    await eventually(
      () => get('HorizontalPodAutoscaler', 'main'),
      (h) => h === undefined,
      'HPA removed',
    );
    // The floor from sizing (6) is above spec.replicas (4).
    const d = await eventually(
      () => get('Deployment', 'main'),
      (x) => x?.spec.replicas === 6,
      'replicas set to the floor',
    );
    expect((d!.metadata.managedFields as Array<{ manager?: string }>).some((m) => m.manager === FIELD_MANAGER)).toBe(true);
  });

  it('turns autoscaling on: the HPA takes over the current count, which is not reset to 1', async () => {
    await createPool(kube, ns, 'fixed', poolSpec({ replicas: 4, autoscaling: { enabled: false } }));
    await eventually(
      () => get('Deployment', 'fixed'),
      (d) => d?.spec.replicas === 4,
      'fixed at 4 replicas',
    );
    expect(await get('HorizontalPodAutoscaler', 'fixed')).toBeUndefined();
    await kube.mergePatch(poolPath(ns, 'fixed'), { spec: { autoscaling: { enabled: true, minReplicas: 2, maxReplicas: 10 } } });
    const hpa = await eventually(
      () => get('HorizontalPodAutoscaler', 'fixed'),
      (h) => h !== undefined,
      'HPA created',
    );
    expect(hpa!.spec).toMatchObject({ minReplicas: 2, maxReplicas: 10 });
    await eventually(
      () => pool('fixed'),
      (p) => p.status?.observedGeneration === 2,
      'generation 2 observed',
    );
    const d = (await get('Deployment', 'fixed'))!;
    expect(d.spec.replicas).toBe(4);
    const owners = (d.metadata.managedFields as Array<{ manager: string; fieldsV1?: { 'f:spec'?: Record<string, unknown> } }>)
      .filter((m) => m.fieldsV1?.['f:spec']?.['f:replicas'] !== undefined)
      .map((m) => m.manager);
    expect(owners).toEqual(['voice-operator-initial-replicas']);
  });

  it('marks a pool whose Secret is missing Degraded, with an Event, and recovers when it appears', async () => {
    await createPool(kube, ns, 'nosecret', poolSpec({ secrets: { workerToken: { name: 'later' } } }));
    const degraded = await eventually(
      () => pool('nosecret'),
      (p) => condition(p, 'Degraded')?.status === 'True',
      'nosecret Degraded',
    );
    expect(condition(degraded, 'Degraded')).toMatchObject({
      reason: 'SecretNotFound',
      message: `Secret ${ns}/later named by spec.secrets.workerToken does not exist; create it or fix spec.secrets.workerToken.name`,
    });
    expect(condition(degraded, 'Ready')).toMatchObject({ status: 'False', reason: 'SecretNotFound' });
    expect(condition(degraded, 'Progressing')).toMatchObject({ status: 'False', reason: 'Blocked' });
    expect(await get('Deployment', 'nosecret')).toBeUndefined();
    const events = await eventually(
      () =>
        kube.get<{ items: Array<{ reason: string; type: string; involvedObject: { name: string } }> }>(`/api/v1/namespaces/${ns}/events`),
      (list) => list.items.some((e) => e.involvedObject.name === 'nosecret' && e.reason === 'SecretNotFound'),
      'a SecretNotFound event',
    );
    expect(events.items.find((e) => e.reason === 'SecretNotFound')?.type).toBe('Warning');

    await createSecret(kube, ns, 'later', { wrong: 'x' });
    await eventually(
      () => pool('nosecret'),
      (p) => condition(p, 'Degraded')?.reason === 'SecretKeyNotFound',
      'SecretKeyNotFound',
    );
    await kube.mergePatch(`/api/v1/namespaces/${ns}/secrets/later`, { data: { token: Buffer.from('t').toString('base64') } });
    await eventually(
      () => pool('nosecret'),
      (p) => condition(p, 'Degraded')?.status === 'False',
      'nosecret recovered',
      15_000,
    );
    expect(await get('Deployment', 'nosecret')).toBeDefined();
  });

  it('gives a pool without autoscaling the default HPA: 70 % CPU, replicas (3) as the floor; sessions per pod from its requests', async () => {
    await createPool(kube, ns, 'defaults', poolSpec());
    const hpa = await eventually(
      () => get('HorizontalPodAutoscaler', 'defaults'),
      (h) => h !== undefined,
      'default HPA',
    );
    expect(hpa!.spec).toMatchObject({
      minReplicas: 3,
      maxReplicas: 10,
      metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } }],
    });
    const d = await eventually(
      () => get('Deployment', 'defaults'),
      (x) => x?.spec.replicas === 3,
      'first replica count 3',
    );
    // No sizing: the pod's warm slots follow the measured capacity of its requests (2 CPU, 4Gi), not 1.
    const derived = defaultSessionsPerReplica({ roomProvider: 'local', resources: { requests: { cpu: '2', memory: '4Gi' } } });
    expect(derived).toBeGreaterThan(1);
    expect(d!.spec.template.spec.containers[0].env).toContainEqual({ name: 'WARM_POOL_SIZE', value: String(derived) });
  });

  it('refuses local rooms on more than one replica unless each pod has its own address, and gives one-replica local pools no HPA', async () => {
    const local = { roomProvider: 'local', livekit: undefined };
    await createPool(kube, ns, 'local-many', poolSpec({ ...local, replicas: 2 }));
    const refused = await eventually(
      () => pool('local-many'),
      (p) => condition(p, 'Degraded')?.reason === 'InvalidSpec',
      'local-many refused',
    );
    expect(condition(refused, 'Ready')?.status).toBe('False');
    expect(condition(refused, 'Degraded')?.message).toContain(
      "roomProvider local keeps each room in one pod's memory, but this pool may run 2 replicas",
    );
    expect(await get('Deployment', 'local-many')).toBeUndefined();

    // One replica: valid, and no default HPA that would scale it out.
    await createPool(kube, ns, 'local-one', poolSpec({ ...local, replicas: 1 }));
    await eventually(
      () => get('Deployment', 'local-one'),
      (d) => d?.spec.replicas === 1,
      'local-one Deployment',
    );
    expect(await get('HorizontalPodAutoscaler', 'local-one')).toBeUndefined();

    // An address per pod (Kubernetes expands $(POD_NAME) from the env var before it): valid at any size.
    await createPool(kube, ns, 'local-per-pod', poolSpec({ ...local, replicas: 2, publicUrl: 'https://$(POD_NAME).rooms.example.com' }));
    const d = await eventually(
      () => get('Deployment', 'local-per-pod'),
      (x) => x !== undefined,
      'local-per-pod Deployment',
    );
    expect(d!.spec.template.spec.containers[0].env).toContainEqual({ name: 'PUBLIC_URL', value: 'https://$(POD_NAME).rooms.example.com' });
  });

  it('refuses an unknown field in a child (strict field validation), naming it', async () => {
    // A typo in pass-through placement: without Strict the API server would drop it silently.
    await createPool(kube, ns, 'typo', poolSpec({ placement: { affinity: { nodeAfinity: {} } } }));
    const p = await eventually(
      () => pool('typo'),
      (x) => condition(x, 'Degraded')?.status === 'True',
      'typo Degraded',
    );
    expect(condition(p, 'Degraded')?.reason).toBe('ApplyFailed');
    expect(condition(p, 'Degraded')?.message).toContain('nodeAfinity');
  });

  it('passes placement through to the pods', async () => {
    const placement = {
      nodeSelector: { 'voice.example.com/pool': 'yes' },
      tolerations: [{ key: 'gpu', operator: 'Exists', effect: 'NoSchedule' }],
      priorityClassName: 'system-cluster-critical',
    };
    await createPool(kube, ns, 'placed', poolSpec({ placement, resources: { gpu: { count: 1 } } }));
    const d = await eventually(
      () => get('Deployment', 'placed'),
      (x) => x !== undefined,
      'placed Deployment',
    );
    expect(d!.spec.template.spec).toMatchObject(placement);
    expect(d!.spec.template.spec.containers[0].resources.limits).toMatchObject({ 'nvidia.com/gpu': '1' });
  });

  it('removes the Ingress when the pool no longer asks for one, and reports the in-cluster endpoint', async () => {
    await kube.mergePatch(poolPath(ns, 'main'), { spec: { ingress: null } });
    await eventually(
      () => get('Ingress', 'main'),
      (i) => i === undefined,
      'Ingress removed',
    );
    // The Service's 443 is plain HTTP (TLS terminates at an Ingress): the endpoint says so.
    const p = await eventually(
      () => pool('main'),
      (x) => x.status?.endpoint === `http://main.${ns}.svc:443/`,
      'endpoint of the Service',
    );
    expect(condition(p, 'Degraded')?.status).toBe('False');
  });

  it('marks a child the API server refuses as ApplyFailed, naming the cause', async () => {
    await createPool(
      kube,
      ns,
      'refused',
      poolSpec({ ingress: { host: 'refused.example.com', tlsSecretName: 'tls', annotations: { 'not a valid key!': 'x' } } }),
    );
    const p = await eventually(
      () => pool('refused'),
      (x) => condition(x, 'Degraded')?.status === 'True',
      'refused Degraded',
    );
    expect(condition(p, 'Degraded')?.reason).toBe('ApplyFailed');
    expect(condition(p, 'Degraded')?.message).toMatch(
      /VoiceWorkerPool refused: a child was rejected: .*ingresses\/refused: 422 .*not a valid key!/,
    );
    expect(operator.isLeader()).toBe(true);
  });

  it('requeues a window 30 days out at the longest timer, not in a tight loop, and shows the next boundary', async () => {
    const start = Math.ceil(Date.now() / 1000) * 1000 + 30 * 86_400_000;
    await createPool(
      kube,
      ns,
      'later',
      poolSpec({
        preScaling: { leadSeconds: 300, windows: [{ name: 'launch', start: iso(start), end: iso(start + 3_600_000), replicas: 5 }] },
      }),
    );
    const p = await eventually(
      () => pool('later'),
      (x) => x.status?.nextBoundary !== undefined,
      'nextBoundary of later',
    );
    expect(p.status?.nextBoundary).toBe(iso(start - 300_000));
    // A measurement window, not a wait for a result: a setTimeout overflow would reconcile every ms.
    const before = operator.reconciles();
    await new Promise((r) => setTimeout(r, 2000));
    expect(operator.reconciles() - before).toBeLessThan(10);
  });

  it("ignores changes only of a child's status (an HPA reporting its metrics)", async () => {
    const hpaStatus = childPath('HorizontalPodAutoscaler', ns, 'defaults') + '/status';
    await eventually(
      () => pool('defaults'),
      (p) => p.status?.observedGeneration === 1,
      'defaults settled',
    );
    // Let the earlier tests' passes drain: no reconcile for half a second.
    let last = -1;
    await eventually(
      async () => {
        const n = operator.reconciles();
        const quiet = n === last;
        last = n;
        await new Promise((r) => setTimeout(r, 500));
        return quiet;
      },
      (quiet) => quiet,
      'the operator quiet',
    );
    const before = operator.reconciles();
    for (let i = 1; i <= 5; i++)
      await kube.mergePatch(hpaStatus, { status: { currentReplicas: 3, desiredReplicas: 3 + i, lastScaleTime: iso(Date.now()) } });
    // A measurement window: each of those events would have queued a reconcile.
    await new Promise((r) => setTimeout(r, 1000));
    expect(operator.reconciles() - before).toBeLessThanOrEqual(1);
  });

  it('serves metrics and probes', async () => {
    const metrics = await (await fetch(`http://127.0.0.1:${operator.port}/metrics`)).text();
    expect(metrics).toMatch(/controller_runtime_reconcile_total\{controller="voiceworkerpool",result="success"\} [1-9]/);
    expect(metrics).toContain('controller_runtime_reconcile_time_seconds_bucket');
    expect(metrics).toContain('workqueue_depth{name="voiceworkerpool"}');
    expect(metrics).toMatch(/workqueue_adds_total\{name="voiceworkerpool"\} [1-9]/);
    expect(metrics).toContain('workqueue_queue_duration_seconds_bucket');
    expect(metrics).toContain('workqueue_work_duration_seconds_bucket');
    expect(metrics).toContain('workqueue_longest_running_processor_seconds{name="voiceworkerpool"}');
    expect(metrics).toContain('leader_election_master_status{name="voice-operator-leader"} 1');
    expect(metrics).toMatch(/rest_client_requests_total\{code="200",method="PATCH",host="[^"]+"\} [1-9]/);
    // A blocked pool (ApplyFailed above) is an error no retry fixes, and counted as one.
    expect(metrics).toMatch(/controller_runtime_terminal_reconcile_errors_total\{controller="voiceworkerpool"\} [1-9]/);
    expect(metrics).toMatch(/controller_runtime_reconcile_total\{controller="voiceworkerpool",result="error"\} [1-9]/);
    expect(metrics).toMatch(/voice_operator_watch_lifecycle_total\{resource="voiceworkerpools",event="listed"\} [1-9]/);
    expect(metrics).toMatch(/controller_runtime_reconcile_total\{controller="voiceworkerpool",result="requeue_after"\} [1-9]/);
    expect((await fetch(`http://127.0.0.1:${operator.port}/healthz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${operator.port}/readyz`)).status).toBe(200);
  });
});

describe("the operator's own API traffic", () => {
  it('reads pools and children from its informer caches, not with a GET per reconcile, and logs API warnings', async () => {
    const cacheNs = await createNamespace(kube, 'cache');
    await createSecret(kube, cacheNs, 'worker', { token: 'shared-worker-token' });
    const own = await adminClient();
    const lines: string[] = [];
    const op = await runOperator(own, cacheNs, {}, createLogger({ name: 'test', level: 'warn', sink: (line) => lines.push(line) }));
    try {
      await createPool(kube, cacheNs, 'cached', poolSpec());
      await eventually(
        () => kube.get<VoiceWorkerPool>(poolPath(cacheNs, 'cached')),
        (p) => p.status?.observedGeneration === 1,
        'cached reconciled',
      );
      const gets: string[] = [];
      const stop = own.observe({ onResponse: (method, _code, path) => (method === 'GET' ? gets.push(path) : undefined) });
      const before = op.reconciles();
      await kube.mergePatch(poolPath(cacheNs, 'cached'), { spec: { maxSessionSeconds: 600 } });
      await eventually(
        () => kube.get<VoiceWorkerPool>(poolPath(cacheNs, 'cached')),
        (p) => p.status?.observedGeneration === 2,
        'generation 2 reconciled',
      );
      // The status write comes before the count: wait for the pass to finish.
      await eventually(
        async () => op.reconciles(),
        (n) => n > before,
        'the reconcile of generation 2 counted',
      );
      stop();
      // Only what no informer holds: the referenced Secret (checked, not watched) and the Lease.
      expect(gets.filter((path) => !path.includes('/secrets/') && !path.includes('/leases/'))).toEqual([]);

      // The API server's warnings (here: an unknown field) reach the operator's log.
      await own.request('POST', poolPath(cacheNs), {
        body: {
          apiVersion: 'voice.service.io/v1beta1',
          kind: 'VoiceWorkerPool',
          metadata: { name: 'warned' },
          spec: { ...poolSpec(), bogus: 1 },
        },
        query: { fieldValidation: 'Warn' },
      });
      const warned = lines.map((l) => JSON.parse(l) as { msg: string; warning?: string }).find((l) => l.msg === 'the API server warned');
      expect(warned?.warning).toContain('unknown field "spec.bogus"');
    } finally {
      await op.stop();
      own.close();
    }
  });
});
