/**
 * The Kubernetes ecosystem's own validators over everything we ship: the chart with every values
 * file of examples/ and of the docs, and the operator's objects. helm lint --strict; kubeconform in
 * strict mode against the Kubernetes schemas of the chart's floor (1.27) and of the newest version,
 * with the CRD's schema for pools and the Prometheus Operator's for monitors and rules; kube-score;
 * pluto. Tools come from scripts/validators.sh; a missing one fails the test.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../harness/kube-binaries.ts';
import { helm, WITH_REGISTRY } from '../helpers.ts';
import { writeCrdSchemas } from './crd-schema.ts';
import { writeMonitoringSchemas } from './monitoring-schemas.ts';
import { CHART, operatorObjects, scratchFile, valuesCases } from './renders.ts';
import { runTool, said, SCHEMA_KUBE_VERSIONS, validators, type Validators } from './tools.ts';

/**
 * kube-score checks we do not follow, and why (every other check, the optional ones below included,
 * must pass; a CRITICAL finding fails the test):
 * - container-security-context-user-group-id: it wants uid and gid above 10000; the images run as
 *   the node user (1000:1000) with runAsNonRoot enforced, and OpenShift assigns ids of its own
 *   (workerPods.runAsUser and podSecurityContext take null there).
 * - container-image-pull-policy: it wants Always; IfNotPresent is right for immutable tags and
 *   digests, and the pull policy is the user's (image.pullPolicy, spec.image.pullPolicy).
 * The chart's `helm test` pod carries its own `kube-score/ignore` annotation (a one-shot check has
 * no probes and no NetworkPolicy of its own).
 * Warnings accepted (they do not fail kube-score's exit code, and are left visible in its output):
 * no egress NetworkPolicy (workers call model providers, rooms and Redis wherever they are; the
 * operator calls an API server whose address differs per cluster), and no required host
 * anti-affinity for workers (their placement is the pool's `spec.placement`).
 */
const KUBE_SCORE_IGNORED = ['container-security-context-user-group-id', 'container-image-pull-policy'];
/** Optional checks worth having (kube-score runs them only when asked). */
const KUBE_SCORE_OPTIONAL = ['container-seccomp-profile', 'container-ports-check'];

let v: Validators;
let crdSchemas: string;

beforeAll(() => {
  v = validators();
  crdSchemas = mkdtempSync(join(tmpdir(), 'voice-crd-schemas-'));
  writeCrdSchemas(join(REPO_ROOT, 'crds/voice.service.io_voiceworkerpools.yaml'), crdSchemas);
  writeMonitoringSchemas(crdSchemas);
});

const render = (args: string[], kubeVersion: string) =>
  helm(['template', 'vo', CHART, ...WITH_REGISTRY, '--namespace', 'ops', '--include-crds', '--kube-version', kubeVersion, ...args]);

function kubeconform(kubeVersion: string, file: string) {
  return runTool(v.kubeconform, [
    '-strict',
    '-summary',
    '-output',
    'text',
    '-kubernetes-version',
    kubeVersion,
    '-schema-location',
    `${v.schemas}/{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json`,
    '-schema-location',
    `${crdSchemas}/{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json`,
    file,
  ]);
}

const kubeScore = (file: string) =>
  runTool(v.kubeScore, [
    'score',
    '--output-format',
    'ci',
    ...KUBE_SCORE_IGNORED.flatMap((t) => ['--ignore-test', t]),
    ...KUBE_SCORE_OPTIONAL.flatMap((t) => ['--enable-optional-test', t]),
    file,
  ]);

const pluto = (file: string, kubeVersion: string) =>
  runTool(v.pluto, ['detect', file, '--target-versions', `k8s=v${kubeVersion}`, '--output', 'wide']);

describe('the validators themselves find problems (so a clean result means something)', () => {
  const broken = [
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata: {name: x}',
    'spec:',
    '  replicas: "two"',
    '  selector: {matchLabels: {a: b}}',
    '  template:',
    '    metadata: {labels: {a: b}}',
    '    spec: {containers: [{name: c, image: "nginx:latest", surprise: 1}]}',
    '',
  ].join('\n');
  it('kubeconform refuses a wrong type and an unknown field', async () => {
    const r = await kubeconform('1.27.0', scratchFile('broken.yaml', broken));
    expect(r.code, said('kubeconform', r)).not.toBe(0);
    expect(r.stdout).toMatch(/replicas|surprise/);
  });
  it('kube-score flags a container without limits, probes or a security context', async () => {
    const r = await kubeScore(
      scratchFile('broken-score.yaml', broken.replace('replicas: "two"', 'replicas: 2').replace(', surprise: 1', '')),
    );
    expect(r.code, said('kube-score', r)).not.toBe(0);
    expect(r.stdout).toMatch(/\[CRITICAL\]/);
  });
  it('pluto flags an API removed in the target version', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'voice-pluto-'));
    const file = join(dir, 'old.yaml');
    writeFileSync(file, 'apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: x}\nspec: {maxUnavailable: 1}\n');
    const r = await pluto(file, '1.27.0');
    expect(r.code, said('pluto', r)).not.toBe(0);
    expect(r.stdout).toContain('policy/v1beta1');
  });
});

describe('the chart, with every values file of examples/ and the docs', () => {
  const cases = valuesCases();

  it.each(cases.map((c) => [c.name, c] as const))('%s: helm lint --strict', async (_name, c) => {
    expect(await helm(['lint', '--strict', CHART, ...WITH_REGISTRY, ...c.args])).toContain('1 chart(s) linted, 0 chart(s) failed');
  });

  for (const kubeVersion of SCHEMA_KUBE_VERSIONS) {
    it.each(cases.map((c) => [c.name, c] as const))(`%s: kubeconform -strict at ${kubeVersion}, pluto`, async (name, c) => {
      const file = scratchFile(`${kubeVersion}/${name}.yaml`, await render(c.args, kubeVersion));
      const r = await kubeconform(kubeVersion, file);
      expect(r.code, said('kubeconform', r)).toBe(0);
      expect(r.stdout).not.toMatch(/skipped [1-9]/i); // every kind had a schema
      const p = await pluto(file, kubeVersion);
      expect(p.code, said('pluto', p)).toBe(0);
    });
  }

  it.each(cases.map((c) => [c.name, c] as const))('%s: kube-score', async (name, c) => {
    const file = scratchFile(`score/${name}.yaml`, await render(c.args, SCHEMA_KUBE_VERSIONS.at(-1)!));
    const r = await kubeScore(file);
    expect(r.code, said('kube-score', r)).toBe(0);
  });
});

describe("the operator's objects", () => {
  for (const objects of operatorObjects()) {
    it(`${objects.name}: kubeconform -strict at ${SCHEMA_KUBE_VERSIONS.join(' and ')}, kube-score, pluto`, async () => {
      const file = scratchFile(`${objects.name}.yaml`, objects.yaml);
      for (const kubeVersion of SCHEMA_KUBE_VERSIONS) {
        const r = await kubeconform(kubeVersion, file);
        expect(r.code, said(`kubeconform ${kubeVersion}`, r)).toBe(0);
        const p = await pluto(file, kubeVersion);
        expect(p.code, said('pluto', p)).toBe(0);
      }
      const s = await kubeScore(file);
      expect(s.code, said('kube-score', s)).toBe(0);
    });
  }
});
