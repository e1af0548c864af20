/**
 * Self-hosted speech per pool against a real API server: the CRD admits a pool whose only model key
 * is the LLM's when its speech is its own (and still refuses one with no key at all); the operator
 * creates `<pool>-speech` (Deployment, Service, PDB, HPA) owned by the pool, points the workers at it,
 * holds Ready until a speech server is available, and deletes them when speech is turned off.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { childPath, fieldOwners } from '../../operator/children.ts';
import type { RunningOperator } from '../../operator/controller.ts';
import type { KubeClient } from '../../operator/kube.ts';
import { poolPath } from '../../operator/reconcile.ts';
import { FIELD_MANAGER, type KubeObject, type VoiceWorkerPool } from '../../operator/types.ts';
import { REPO_ROOT } from '../harness/kube-binaries.ts';
import {
  adminClient,
  createNamespace,
  createPool,
  createSecret,
  ensureCrd,
  eventually,
  getOrUndefined,
  helm,
  kubectl,
  poolSpec,
  runOperator,
  WITH_REGISTRY,
} from './helpers.ts';

let kube: KubeClient;
let ns: string;
let operator: RunningOperator;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- assertions read deep into API objects
type Obj = KubeObject & { spec: Record<string, any>; metadata: KubeObject['metadata'] & { uid: string; generation?: number } };

beforeAll(async () => {
  kube = await adminClient();
  await ensureCrd(kube);
  ns = await createNamespace(kube, 'speech');
  await createSecret(kube, ns, 'worker', { token: 'shared-worker-token' });
  await createSecret(kube, ns, 'providers', { llm: 'k1' });
  await createSecret(kube, ns, 'speech', { token: 'a-speech-token-of-32-characters!' });
  operator = await runOperator(kube, ns);
});
afterAll(async () => {
  await operator?.stop();
  kube?.close();
});

const get = (kind: Parameters<typeof childPath>[0], name: string) => getOrUndefined<Obj>(kube, childPath(kind, ns, name));
const pool = (name: string) => kube.get<VoiceWorkerPool>(poolPath(ns, name));
const condition = (p: VoiceWorkerPool, type: string) => p.status?.conditions?.find((c) => c.type === type);

/** Only an LLM key: speech-to-text and text-to-speech are the pool's own. */
const llmOnly = { workerToken: { name: 'worker' }, llmApiKey: { name: 'providers', key: 'llm' } };
const spec = (extra: Record<string, unknown> = {}) => {
  const s = poolSpec({
    replicas: 1,
    autoscaling: { enabled: false },
    speech: { selfHosted: { tokenSecret: { name: 'speech' } } },
    ...extra,
  });
  return { ...s, secrets: llmOnly };
};

describe('the CRD with self-hosted speech', () => {
  it('admits a pool with self-hosted speech and only an LLM key, with the speech defaults filled in', async () => {
    const created = await createPool(kube, ns, 'admitted', spec({ replicas: 0 }));
    expect(created.spec.speech?.selfHosted).toMatchObject({
      enabled: true,
      tokenSecret: { name: 'speech', key: 'token' },
      replicas: 1,
      autoscaling: { enabled: true, minReplicas: 1, maxReplicas: 4, targetCPUUtilizationPercentage: 70 },
      resources: { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '2', memory: '1536Mi' } },
    });
  });

  it('still refuses a pool with no model key at all, and one with speech turned off and only an LLM key', async () => {
    const refuse = async (body: Record<string, unknown>) =>
      createPool(kube, ns, `bad-${Math.random().toString(36).slice(2, 8)}`, body).then(
        () => 'accepted',
        (err: Error) => err.message,
      );
    expect(await refuse({ ...spec(), secrets: { workerToken: { name: 'worker' } } })).toContain('the worker needs a model key');
    expect(await refuse(spec({ speech: { selfHosted: { enabled: false, tokenSecret: { name: 'speech' } } } }))).toContain(
      'the worker needs a model key',
    );
    expect(await refuse(spec({ speech: { selfHosted: {} } }))).toContain('spec.speech.selfHosted.tokenSecret: Required value');
    const long = await createPool(kube, ns, 'a'.repeat(57), spec()).then(
      () => 'accepted',
      (err: Error) => err.message,
    );
    expect(long).toContain('at most 56 characters');
  });
});

describe('the chart with self-hosted speech', () => {
  it('passes pool.spec.speech through (examples/chart/speech.yaml), and the API server admits the pool it renders', async () => {
    const rendered = await helm([
      'template',
      'speech',
      join(REPO_ROOT, 'charts/voice-operator'),
      ...WITH_REGISTRY,
      '--namespace',
      ns,
      '--skip-tests',
      '-f',
      join(REPO_ROOT, 'examples/chart/speech.yaml'),
    ]);
    const poolDoc = rendered
      .split(/^---$/m)
      .map((d) => parse(d) as { kind?: string; spec?: VoiceWorkerPool['spec'] } | null)
      .find((d) => d?.kind === 'VoiceWorkerPool')!;
    expect(poolDoc.spec?.speech?.selfHosted).toMatchObject({
      enabled: true,
      tokenSecret: { name: 'speech', key: 'token' },
      sttConcurrency: 2,
    });
    expect(poolDoc.spec?.secrets).not.toHaveProperty('openaiApiKey');
    const out = await kubectl(['apply', '--server-side', '--dry-run=server', '-n', ns, '-f', '-'], { input: JSON.stringify(poolDoc) });
    expect(out).toContain('voiceworkerpool.voice.service.io/interviews serverside-applied (server dry run)');
  });
});

describe('the operator with self-hosted speech', () => {
  it('creates <pool>-speech (Deployment, Service, PDB, HPA) owned by the pool and points the workers at it', async () => {
    const created = await createPool(kube, ns, 'talk', spec());
    const [deployment, service, hpa, pdb] = await eventually(
      () =>
        Promise.all([
          get('Deployment', 'talk-speech'),
          get('Service', 'talk-speech'),
          get('HorizontalPodAutoscaler', 'talk-speech'),
          get('PodDisruptionBudget', 'talk-speech'),
        ]),
      (all) => all.every((o) => o !== undefined),
      'the speech children of talk',
    );
    for (const child of [deployment!, service!, hpa!, pdb!]) {
      expect(child.metadata.ownerReferences).toEqual([
        {
          apiVersion: 'voice.service.io/v1beta1',
          kind: 'VoiceWorkerPool',
          name: 'talk',
          uid: created.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
    }
    const container = deployment!.spec.template.spec.containers[0];
    expect(container.command).toEqual(['node', 'speech/main.ts']);
    expect(container.image).toBe('registry.example.com/voice-worker:v1.3.0');
    expect(container.env).toContainEqual({ name: 'SPEECH_TOKEN', valueFrom: { secretKeyRef: { name: 'speech', key: 'token' } } });
    expect(container.readinessProbe.httpGet).toMatchObject({ path: '/readyz', port: 'metrics' });
    expect(service!.spec).toMatchObject({
      type: 'ClusterIP',
      ports: [{ name: 'http', port: 7870, targetPort: 'http', protocol: 'TCP', appProtocol: 'http' }],
    });
    expect(service!.spec.selector['app.kubernetes.io/name']).toBe('voice-speech');
    expect(hpa!.spec).toMatchObject({ minReplicas: 1, maxReplicas: 4, scaleTargetRef: { kind: 'Deployment', name: 'talk-speech' } });

    const worker = await eventually(
      () => get('Deployment', 'talk'),
      (d) => d !== undefined,
      'the workers of talk',
    );
    const env = Object.fromEntries(
      worker!.spec.template.spec.containers[0].env.map((e: { name: string; value?: string; valueFrom?: unknown }) => [
        e.name,
        e.value ?? e.valueFrom,
      ]),
    );
    expect(env).toMatchObject({
      STT_BASE_URL: `http://talk-speech.${ns}.svc:7870/v1`,
      TTS_BASE_URL: `http://talk-speech.${ns}.svc:7870/v1`,
      STT_API_KEY: { secretKeyRef: { name: 'speech', key: 'token' } },
      TTS_API_KEY: { secretKeyRef: { name: 'speech', key: 'token' } },
      LLM_API_KEY: { secretKeyRef: { name: 'providers', key: 'llm' } },
    });
  });

  it('keeps the pool not Ready until a speech server is available', async () => {
    // No controllers run here: play the Deployment controller for the workers first.
    const generation = (await get('Deployment', 'talk'))!.metadata.generation;
    await kube.mergePatch(childPath('Deployment', ns, 'talk') + '/status', {
      status: { observedGeneration: generation, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 },
    });
    const waiting = await eventually(
      () => pool('talk'),
      (p) => condition(p, 'SpeechReady') !== undefined && p.status?.readyReplicas === 1,
      'talk with its worker ready',
    );
    expect(condition(waiting, 'SpeechReady')).toMatchObject({ status: 'False', reason: 'SpeechNotReady' });
    expect(condition(waiting, 'Ready')).toMatchObject({ status: 'False', reason: 'SpeechNotReady' });
    const speechGeneration = (await get('Deployment', 'talk-speech'))!.metadata.generation;
    await kube.mergePatch(childPath('Deployment', ns, 'talk-speech') + '/status', {
      status: { observedGeneration: speechGeneration, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 },
    });
    const ready = await eventually(
      () => pool('talk'),
      (p) => condition(p, 'Ready')?.status === 'True',
      'talk Ready once its speech server is',
    );
    expect(condition(ready, 'SpeechReady')).toMatchObject({ status: 'True', reason: 'SpeechAvailable' });
  });

  it("hands the speech server's count to its HPA without resetting it when autoscaling is turned on", async () => {
    await kube.mergePatch(poolPath(ns, 'talk'), { spec: { speech: { selfHosted: { replicas: 3, autoscaling: { enabled: false } } } } });
    await eventually(
      () => get('Deployment', 'talk-speech'),
      (d) => d?.spec.replicas === 3,
      'talk-speech at 3 without an HPA',
    );
    await eventually(
      () => get('HorizontalPodAutoscaler', 'talk-speech'),
      (h) => h === undefined,
      'the speech HPA removed',
    );
    await kube.mergePatch(poolPath(ns, 'talk'), { spec: { speech: { selfHosted: { autoscaling: { enabled: true } } } } });
    await eventually(
      () => get('HorizontalPodAutoscaler', 'talk-speech'),
      (h) => h !== undefined,
      'the speech HPA back',
    );
    // The operator no longer applies the count, and it was handed over, not dropped back to 1.
    const operatorOwnsCount = (x: Obj | undefined) =>
      fieldOwners(x?.metadata.managedFields as Parameters<typeof fieldOwners>[0], ['spec', 'replicas']).includes(FIELD_MANAGER);
    const d = await eventually(
      () => get('Deployment', 'talk-speech'),
      (x) => x !== undefined && !operatorOwnsCount(x),
      "the count no longer the operator's",
    );
    expect(d!.spec.replicas).toBe(3);
  });

  it('deletes the speech children when the pool turns speech off, and the workers go back to their providers', async () => {
    await kube.mergePatch(poolPath(ns, 'talk'), { spec: { secrets: { openaiApiKey: { name: 'providers', key: 'llm' } }, speech: null } });
    await eventually(
      () =>
        Promise.all([
          get('Deployment', 'talk-speech'),
          get('Service', 'talk-speech'),
          get('HorizontalPodAutoscaler', 'talk-speech'),
          get('PodDisruptionBudget', 'talk-speech'),
        ]),
      (all) => all.every((o) => o === undefined),
      'the speech children of talk deleted',
    );
    const worker = await eventually(
      () => get('Deployment', 'talk'),
      (d) => !JSON.stringify(d?.spec.template.spec.containers[0].env).includes('talk-speech'),
      'workers without the speech server',
    );
    expect(worker!.spec.template.spec.containers[0].env.find((e: { name: string }) => e.name === 'STT_API_KEY')).toBeUndefined();
    const p = await eventually(
      () => pool('talk'),
      (x) => condition(x, 'SpeechReady') === undefined,
      'SpeechReady gone',
    );
    expect(condition(p, 'Ready')).toMatchObject({ status: 'True' });
  });
});
