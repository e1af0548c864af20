/**
 * Where the chart's images come from (docs/install.md): nothing is published, so it refuses to
 * render without image.registry and says where the build-and-push commands are; with a registry and
 * digests it renders `registry/repository:tag@sha256:...` for the operator and hands the worker image
 * to the operator, whose configuration reads it back as the default of pools without spec.image.
 * NOTES.txt names the CRD's storage version.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { loadConfig } from '../../operator/config.ts';
import { REPO_ROOT } from '../harness/kube-binaries.ts';
import { helm } from './helpers.ts';

const CHART = join(REPO_ROOT, 'charts/voice-operator');
const OPERATOR_DIGEST = `sha256:${'a'.repeat(64)}`;
const WORKER_DIGEST = `sha256:${'b'.repeat(64)}`;

interface Container {
  image: string;
  env: Array<{ name: string; value?: string }>;
}

async function operatorContainer(...sets: string[]): Promise<Container> {
  const out = await helm(['template', 'vo', CHART, '--namespace', 'ops', '--skip-tests', ...sets.flatMap((s) => ['--set', s])]);
  const deployment = parseAllDocuments(out)
    .map((d) => d.toJSON() as { kind?: string; spec?: { template: { spec: { containers: Container[] } } } })
    .find((d) => d?.kind === 'Deployment');
  return deployment!.spec!.template.spec.containers[0]!;
}
const envOf = (c: Container): Record<string, string> =>
  Object.fromEntries(c.env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));

describe("the chart's images", () => {
  it('refuses to render without image.registry, naming the doc with the build-and-push commands', async () => {
    // helm install renders as template does; helm lint lets `required` pass (its lint mode), so it is not asked.
    const failure = helm(['template', 'vo', CHART]);
    await expect(failure).rejects.toThrow(/image\.registry is required: no image of voice-operator is published/);
    await expect(failure).rejects.toThrow(/docs\/install\.md/);
  });

  it('renders both images from the registry by tag, and pinned by digest', async () => {
    const byTag = await operatorContainer('image.registry=registry.example.com/voice');
    expect(byTag.image).toBe('registry.example.com/voice/voice-operator:v1.3.0');
    expect(envOf(byTag)).toMatchObject({ WORKER_IMAGE_REPOSITORY: 'registry.example.com/voice/voice-worker', WORKER_IMAGE_TAG: 'v1.3.0' });
    expect(envOf(byTag).WORKER_IMAGE_DIGEST).toBeUndefined();

    const pinned = await operatorContainer(
      'image.registry=registry.example.com/voice',
      `image.digest=${OPERATOR_DIGEST}`,
      `workerImage.digest=${WORKER_DIGEST}`,
    );
    expect(pinned.image).toBe(`registry.example.com/voice/voice-operator:v1.3.0@${OPERATOR_DIGEST}`);
    expect(envOf(pinned)).toMatchObject({
      WORKER_IMAGE_REPOSITORY: 'registry.example.com/voice/voice-worker',
      WORKER_IMAGE_TAG: 'v1.3.0',
      WORKER_IMAGE_DIGEST: WORKER_DIGEST,
    });
    // What the operator makes of that environment: the default image of pools that name none.
    expect(loadConfig(envOf(pinned)).build.workerImage).toEqual({
      repository: 'registry.example.com/voice/voice-worker',
      tag: 'v1.3.0',
      digest: WORKER_DIGEST,
    });
  });

  it('takes another registry and tag for the worker, and refuses a digest that is not one', async () => {
    const own = await operatorContainer(
      'image.registry=localhost',
      'image.tag=t-operator',
      'workerImage.registry=mirror.example.com:5000/team',
      'workerImage.tag=t-worker',
    );
    expect(own.image).toBe('localhost/voice-operator:t-operator');
    expect(envOf(own)).toMatchObject({
      WORKER_IMAGE_REPOSITORY: 'mirror.example.com:5000/team/voice-worker',
      WORKER_IMAGE_TAG: 't-worker',
    });
    await expect(
      helm(['lint', '--strict', CHART, '--set', 'image.registry=r.example.com', '--set', 'workerImage.digest=latest']),
    ).rejects.toThrow(/digest/);
  });

  it("NOTES.txt tells users to write the CRD's storage version", () => {
    const crd = parse(readFileSync(join(CHART, 'crds/voice.service.io_voiceworkerpools.yaml'), 'utf8')) as {
      spec: { versions: Array<{ name: string; served: boolean; storage: boolean }> };
    };
    const storage = crd.spec.versions.find((v) => v.storage && v.served)!.name;
    expect(storage).toBe('v1beta1');
    const notes = readFileSync(join(CHART, 'templates/NOTES.txt'), 'utf8');
    expect(notes).toContain(`apiVersion: voice.service.io/${storage}`);
    for (const v of crd.spec.versions.filter((x) => !x.storage)) expect(notes).not.toContain(`voice.service.io/${v.name}`);
  });
});
