/**
 * What a platform team asks of the chart beyond "it installs": usable as a subchart, documented and
 * listed (README, Artifact Hub metadata), a `helm test`, common labels, a disruption budget and
 * spread for the operator's replicas, ids OpenShift can assign, images by registry and digest, and
 * a least-privileged default (no Secret reads it is not granted, pods only listed and watched).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { helm, WITH_REGISTRY } from './helpers.ts';

import { CHART } from './validators/renders.ts';

interface Doc {
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: Record<string, unknown> & {
    template?: { spec: Record<string, unknown> & { containers: Array<{ image: string; env: Array<{ name: string; value?: string }> }> } };
  };
  rules?: Array<{ resources: string[]; verbs: string[] }>;
}

async function docs(...args: string[]): Promise<Doc[]> {
  const out = await helm(['template', 'vo', CHART, '--namespace', 'ops', ...WITH_REGISTRY, ...args]);
  return parseAllDocuments(out)
    .map((d) => d.toJSON() as Doc)
    .filter(Boolean);
}
const one = (all: Doc[], kind: string, name?: string) =>
  all.find((d) => d.kind === kind && (name === undefined || d.metadata.name === name));
const podSpec = (all: Doc[]) => one(all, 'Deployment')!.spec!.template!.spec;
const env = (all: Doc[]) => Object.fromEntries(podSpec(all).containers[0]!.env.map((e) => [e.name, e.value]));

describe('the chart for platform teams', () => {
  it("accepts a parent chart's global values (usable as a subchart)", async () => {
    expect(await helm(['lint', '--strict', CHART, ...WITH_REGISTRY, '--set', 'global.imageRegistry=registry.example.com'])).toContain(
      '0 chart(s) failed',
    );
  });

  it('has a README and Artifact Hub metadata naming its CRD and image', () => {
    expect(existsSync(join(CHART, 'README.md'))).toBe(true);
    const chart = parse(readFileSync(join(CHART, 'Chart.yaml'), 'utf8')) as { annotations: Record<string, string> };
    expect((parse(chart.annotations['artifacthub.io/crds']!) as Array<{ kind: string }>)[0]!.kind).toBe('VoiceWorkerPool');
    const images = parse(chart.annotations['artifacthub.io/images']!) as Array<{ image: string }>;
    const values = parse(readFileSync(join(CHART, 'values.yaml'), 'utf8')) as { image: { repository: string; tag: string } };
    expect(images[0]!.image).toBe(`${values.image.repository}:${values.image.tag}`);
  });

  it('ships a helm test pod that checks the metrics Service, under the restricted profile', async () => {
    const all = await docs();
    const test = all.find((d) => d.metadata.annotations?.['helm.sh/hook'] === 'test');
    expect(test?.kind).toBe('Pod');
    expect(JSON.stringify(test)).toContain('vo-voice-operator-metrics.ops.svc:8080');
    expect(test!.spec!.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
  });

  it('puts commonLabels on every object', async () => {
    const all = await docs(
      '--set',
      'commonLabels.team=voice',
      '--set',
      'prometheusRule.enabled=true',
      '--set',
      'pool.enabled=true',
      '--set',
      'pool.spec.backendUrl=https://a.example',
      '--set',
      'pool.spec.image.repository=r/w',
      '--set',
      'pool.spec.roomProvider=local',
      '--set',
      'pool.spec.redis.url=redis://r:6379',
      '--set',
      'pool.spec.secrets.workerToken.name=w',
    );
    expect(all.length).toBeGreaterThan(8);
    for (const d of all) expect(d.metadata.labels?.team, `${d.kind}/${d.metadata.name}`).toBe('voice');
  });

  it('gives the two replicas a disruption budget, anti-affinity and a spread', async () => {
    const all = await docs();
    expect(one(all, 'PodDisruptionBudget')?.spec).toMatchObject({ maxUnavailable: 1, unhealthyPodEvictionPolicy: 'AlwaysAllow' });
    const spec = podSpec(all) as {
      affinity?: { podAntiAffinity?: unknown };
      topologySpreadConstraints?: Array<{ labelSelector: unknown }>;
    };
    expect(spec.affinity?.podAntiAffinity).toBeDefined();
    expect(spec.topologySpreadConstraints?.[0]?.labelSelector).toEqual({
      matchLabels: { 'app.kubernetes.io/name': 'voice-operator', 'app.kubernetes.io/instance': 'vo' },
    });
    expect(one(await docs('--set', 'replicaCount=1'), 'PodDisruptionBudget')).toBeUndefined();
  });

  it('leaves user and group ids to the platform when asked (OpenShift), for the operator and the workers', async () => {
    const fixed = await docs();
    expect(podSpec(fixed).securityContext).toMatchObject({ runAsUser: 1000, runAsGroup: 1000 });
    expect(env(fixed).WORKER_RUN_AS_USER).toBe('1000');
    const open = await docs('-f', join(CHART, '../../examples/chart/openshift.yaml'));
    expect(podSpec(open).securityContext).toEqual({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(env(open).WORKER_RUN_AS_USER).toBe('platform');
  });

  it('takes the image from a registry and pins it by digest', async () => {
    const digest = `sha256:${'b'.repeat(64)}`;
    const all = await docs('--set', 'image.registry=registry.example.com/platform', '--set', `image.digest=${digest}`);
    expect(podSpec(all).containers[0]!.image).toBe(`registry.example.com/platform/voice-operator:v1.3.0@${digest}`);
    await expect(helm(['lint', '--strict', CHART, ...WITH_REGISTRY, '--set', 'image.digest=latest'])).rejects.toThrow(/digest/);
  });

  it('is least-privileged by default: pods only listed and watched, Secrets only where granted, and the operator told so', async () => {
    const cluster = await docs('--set', 'secretNamespaces={voice-a,voice-b}');
    const role = one(cluster, 'ClusterRole', 'vo-voice-operator')!;
    expect(role.rules!.find((r) => r.resources.includes('pods'))?.verbs).toEqual(['list', 'watch']);
    expect(role.rules!.some((r) => r.resources.includes('secrets'))).toBe(false);
    expect(role.rules!.find((r) => r.resources.includes('networkpolicies'))?.verbs).toEqual(
      expect.arrayContaining(['list', 'watch', 'create', 'patch', 'delete']),
    );
    expect(env(cluster)).toMatchObject({
      SECRET_NAMESPACES: 'voice-a,voice-b',
      READ_POD_STATUS: 'true',
      WORKER_NETWORK_POLICY: 'true',
      WORKER_METRICS_NAMESPACES: 'monitoring',
    });
    const without = await docs('--set', 'workerPods.readPodStatus=false');
    expect(one(without, 'ClusterRole', 'vo-voice-operator')!.rules!.some((r) => r.resources.includes('pods'))).toBe(false);
    expect(env(without)).toMatchObject({ READ_POD_STATUS: 'false' });
    const scoped = await docs('--set', 'watchNamespace=voice', '--set', 'workerPods.readPodStatus=true');
    expect(env(scoped)).toMatchObject({ SECRET_NAMESPACES: 'voice', READ_POD_STATUS: 'true' });
    expect(one(scoped, 'Role', 'vo-voice-operator')!.rules!.some((r) => r.resources.includes('pods'))).toBe(true);
  });
});
