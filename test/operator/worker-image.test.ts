/**
 * The operator's default worker image (chart: image.registry, workerImage; docs/install.md) against
 * a real API server: a pool that leaves out spec.image runs it, workers and speech server alike; a
 * pool that names its image keeps it; without a default such a pool is refused with a reason, and
 * nothing is applied (never a name that resolves to an empty registry).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childPath } from '../../operator/children.ts';
import type { KubeClient } from '../../operator/kube.ts';
import { poolPath } from '../../operator/reconcile.ts';
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

const DIGEST = `sha256:${'d'.repeat(64)}`;
const DEFAULT_IMAGE = { repository: 'registry.example.com/voice/voice-worker', tag: 't-quick', digest: DIGEST };
let kube: KubeClient;

interface Deployment {
  spec: { template: { spec: { containers: Array<{ image: string }> } } };
}
/** The pool's spec without `image`, as a newcomer writes it. */
function imagelessSpec(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const { image: _image, ...spec } = poolSpec(extra);
  return spec;
}
const imageOf = (d: Deployment | undefined) => d?.spec.template.spec.containers[0]?.image;

beforeAll(async () => {
  kube = await adminClient();
  await ensureCrd(kube);
});
afterAll(() => kube?.close());

describe('the default worker image', () => {
  it('runs a pool without spec.image (and its speech server) on the default; a pool with its own image keeps it', async () => {
    const ns = await createNamespace(kube, 'default-image');
    await createSecret(kube, ns, 'worker', { token: 'shared-worker-token' });
    const operator = await runOperator(kube, ns, { build: { runAsUser: 1000, workerImage: DEFAULT_IMAGE } });
    try {
      await createPool(kube, ns, 'plain', imagelessSpec({ speech: { selfHosted: { tokenSecret: { name: 'worker', key: 'token' } } } }));
      await createPool(kube, ns, 'own', poolSpec());
      const expected = `registry.example.com/voice/voice-worker:t-quick@${DIGEST}`;
      const [workers, speech] = await eventually(
        () =>
          Promise.all([
            getOrUndefined<Deployment>(kube, childPath('Deployment', ns, 'plain')),
            getOrUndefined<Deployment>(kube, childPath('Deployment', ns, 'plain-speech')),
          ]),
        (both) => both.every(Boolean),
        'the Deployments of plain and plain-speech',
      );
      expect(imageOf(workers)).toBe(expected);
      expect(imageOf(speech)).toBe(expected);
      const own = await eventually(
        () => getOrUndefined<Deployment>(kube, childPath('Deployment', ns, 'own')),
        Boolean,
        'the Deployment of own',
      );
      expect(imageOf(own)).toBe('registry.example.com/voice-worker:v1.3.0');
      // The stored pool is left as written: the default applies at reconcile, so the chart can change it.
      expect((await kube.get<VoiceWorkerPool>(poolPath(ns, 'plain'))).spec.image).toBeUndefined();
    } finally {
      await operator.stop();
    }
  });

  it('refuses a pool without spec.image when the operator has no default: InvalidSpec, nothing applied', async () => {
    const ns = await createNamespace(kube, 'no-image');
    await createSecret(kube, ns, 'worker', { token: 'shared-worker-token' });
    const operator = await runOperator(kube, ns, { build: { runAsUser: 1000 } });
    try {
      await createPool(kube, ns, 'plain', imagelessSpec());
      const pool = await eventually(
        () => kube.get<VoiceWorkerPool>(poolPath(ns, 'plain')),
        (p) => p.status?.conditions?.some((c) => c.type === 'Degraded') === true,
        'a Degraded condition on plain',
      );
      expect(pool.status!.conditions!.find((c) => c.type === 'Degraded')).toMatchObject({
        status: 'True',
        reason: 'InvalidSpec',
        message:
          'VoiceWorkerPool plain: spec.image is not set and the operator has no default worker image (chart: image.registry, docs/install.md)',
      });
      expect(await getOrUndefined(kube, childPath('Deployment', ns, 'plain'))).toBeUndefined();
    } finally {
      await operator.stop();
    }
  });
});
