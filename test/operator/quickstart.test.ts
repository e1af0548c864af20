/**
 * examples/quickstart/ against a real API server, as the README applies it (kubectl apply -n <ns> -f
 * the directory): every object is admitted (schema, CEL), the Secrets hold what the pools name, and
 * the operator with a default worker image makes both pools' children without a complaint. The
 * cluster test (test/cluster/quickstart.test.ts) takes the same files to Ready on a real node.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childPath } from '../../operator/children.ts';
import type { KubeClient } from '../../operator/kube.ts';
import { poolPath } from '../../operator/reconcile.ts';
import type { VoiceWorkerPool } from '../../operator/types.ts';
import { REPO_ROOT } from '../harness/kube-binaries.ts';
import { adminClient, createNamespace, ensureCrd, eventually, getOrUndefined, kubectl, runOperator } from './helpers.ts';

const QUICKSTART = join(REPO_ROOT, 'examples/quickstart');
let kube: KubeClient;

beforeAll(async () => {
  kube = await adminClient();
  await ensureCrd(kube);
});
afterAll(() => kube?.close());

describe('examples/quickstart', () => {
  it('applies as it stands and both pools get their children on the default worker image', async () => {
    const ns = await createNamespace(kube, 'quickstart');
    const out = await kubectl(['apply', '-n', ns, '-f', QUICKSTART]);
    expect(out.trim().split('\n').sort()).toEqual([
      'deployment.apps/redis created',
      'secret/providers created',
      'secret/speech created',
      'secret/worker created',
      'service/redis created',
      'voiceworkerpool.voice.service.io/interviews created',
      'voiceworkerpool.voice.service.io/interviews-private created',
    ]);
    const operator = await runOperator(kube, ns, {
      build: { runAsUser: 1000, workerImage: { repository: 'registry.example.com/voice/voice-worker', tag: 'v1.3.0' } },
    });
    try {
      for (const name of ['interviews', 'interviews-private', 'interviews-private-speech']) {
        const d = await eventually(
          () =>
            getOrUndefined<{ spec: { template: { spec: { containers: Array<{ image: string; resources: unknown }> } } } }>(
              kube,
              childPath('Deployment', ns, name),
            ),
          Boolean,
          `Deployment ${name}`,
        );
        expect(d!.spec.template.spec.containers[0]!.image).toBe('registry.example.com/voice/voice-worker:v1.3.0');
      }
      for (const name of ['interviews', 'interviews-private']) {
        const pool = await eventually(
          () => kube.get<VoiceWorkerPool>(poolPath(ns, name)),
          (p) => p.status?.conditions?.some((c) => c.type === 'Ready') === true,
          `status of ${name}`,
        );
        // Not Ready here (no node runs pods), but nothing wrong with the spec or its Secrets.
        expect(pool.status!.conditions!.find((c) => c.type === 'Degraded')?.status, JSON.stringify(pool.status)).not.toBe('True');
      }
    } finally {
      await operator.stop();
    }
  });
});
