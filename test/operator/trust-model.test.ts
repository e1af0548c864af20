/**
 * The trust model of docs/operator.md, as written there: its sample ValidatingAdmissionPolicy for
 * pool images works against the real API server (bound to one namespace here, so the other tests'
 * pools are not affected).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { KubeClient } from '../../operator/kube.ts';
import { REPO_ROOT } from '../harness/kube-binaries.ts';
import { adminClient, createNamespace, createPool, ensureCrd, eventually, poolSpec } from './helpers.ts';

let kube: KubeClient;
let ns: string;

beforeAll(async () => {
  kube = await adminClient();
  await ensureCrd(kube);
  ns = await createNamespace(kube, 'trust');
});
afterAll(() => kube?.close());

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the sample is read as plain JSON and edited
type Json = Record<string, any>;

/** The first `count` YAML blocks after a `<!-- sample: name -->` marker in docs/operator.md, unindented. */
function docSample(name: string, count: number): Json[] {
  const doc = readFileSync(join(REPO_ROOT, 'docs/operator.md'), 'utf8');
  const after = doc.slice(doc.indexOf(`<!-- sample: ${name} -->`));
  return [...after.matchAll(/```yaml\n([\s\S]*?)\n\s*```/g)].slice(0, count).map((m) => {
    const indent = /^ */.exec(m[1]!)![0].length;
    return parse(
      m[1]!
        .split('\n')
        .map((l) => l.slice(indent))
        .join('\n'),
    ) as Json;
  });
}

const digest = `sha256:${'a'.repeat(64)}`;

describe('the trust model of docs/operator.md', () => {
  it("its image policy admits pinned images of the trusted registry only, the speech server's too", async () => {
    const [policy, binding] = docSample('image-policy', 2);
    expect(policy!.kind).toBe('ValidatingAdmissionPolicy');
    expect(binding!.kind).toBe('ValidatingAdmissionPolicyBinding');
    // Unique names, and the binding narrowed to this test's namespace.
    policy!.metadata.name = `${ns}-images`;
    binding!.metadata.name = `${ns}-images`;
    binding!.spec.policyName = policy!.metadata.name;
    binding!.spec.matchResources = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } } };
    await kube.request('POST', '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies', { body: policy });
    await kube.request('POST', '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings', { body: binding });
    try {
      const attempt = (name: string, spec: Record<string, unknown>) =>
        createPool(kube, ns, name, spec).then(
          () => 'admitted',
          (err: Error) => err.message,
        );
      // The API server picks a new policy up within moments.
      const foreign = await eventually(
        () => attempt(`foreign-${Date.now()}`, poolSpec({ image: { repository: 'docker.io/someone/worker', digest } })),
        (m) => m !== 'admitted',
        'the policy in force',
      );
      expect(foreign).toContain('a VoiceWorkerPool runs images from registry.example.com/voice/ only');
      expect(await attempt('unpinned', poolSpec({ image: { repository: 'registry.example.com/voice/worker' } }))).toContain(
        'pins its worker image by digest',
      );
      const speech = { selfHosted: { tokenSecret: { name: 'speech' }, image: { repository: 'docker.io/someone/speech' } } };
      expect(
        await attempt('foreign-speech', poolSpec({ image: { repository: 'registry.example.com/voice/worker', digest }, speech })),
      ).toContain('registry.example.com/voice/ only');
      expect(await attempt('trusted', poolSpec({ image: { repository: 'registry.example.com/voice/worker', digest } }))).toBe('admitted');
    } finally {
      await kube.request('DELETE', `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/${binding!.metadata.name}`);
      await kube.request('DELETE', `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/${policy!.metadata.name}`);
    }
  });
});
