import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { POOL_LABEL } from '../../operator/types.ts';
import { kubeCli, type KubeCli } from './kube-cli.ts';
import { installChart } from './pool-steps.ts';

/**
 * A newcomer's first hour on a real node (docs/install.md, examples/quickstart/README.md): the chart
 * installed with a registry (the images built from this working tree stand in for the pushed ones),
 * then the quick start's files applied as they stand, in the README's namespace, with the README's
 * commands: Redis, the Secrets and both pools (provider speech, and self-hosted speech) reach Ready
 * on the operator's default worker image. Nothing in the files is substituted: the Redis image name
 * they give is the cluster's Redis (scripts/cluster/images.sh, docs/cluster.md).
 */
const NAMESPACE = 'voice';
const POOLS = ['interviews', 'interviews-private'];
const cluster = inject('cluster');
const k: KubeCli = kubeCli(cluster);

/** What a person would look at when the wait fails, for the failure message. */
async function diagnostics(): Promise<string> {
  const parts = await Promise.all(
    [
      k.kubectl(['get', 'vwp,deploy,pods', '-n', NAMESPACE, '-o', 'wide']),
      k.kubectl(['get', 'events', '-n', NAMESPACE, '--sort-by=.lastTimestamp']),
      k.kubectl(['get', 'vwp', '-n', NAMESPACE, '-o', 'jsonpath={range .items[*]}{.metadata.name}: {.status.conditions}{"\\n"}{end}']),
    ].map((p) => p.catch((err: Error) => err.message)),
  );
  return parts.join('\n');
}

beforeAll(async () => {
  // The quick start is sized for a node of its own, and the files before this one (platform.test.ts)
  // leave their pools on this one: delete every pool first and wait for their pods to be gone.
  const quiet = (err: Error) => console.warn(err.message);
  await k
    .kubectl(['delete', 'voiceworkerpools.voice.service.io', '--all', '--all-namespaces', '--wait=true', '--timeout=180s'])
    .catch(quiet);
  await k.kubectl(['wait', '--for=delete', 'pods', '-l', POOL_LABEL, '--all-namespaces', '--timeout=180s']).catch(quiet);
}, 400_000);

afterAll(async () => {
  // The pools hold 1.5 CPU of the node's two: give them back to the files that run next. The objects
  // themselves and then their pods, waited for; waiting for the namespace instead timed out once (180 s).
  const quiet = (err: Error) => console.warn(err.message);
  await k
    .kubectl(['delete', '-n', NAMESPACE, '-f', 'examples/quickstart/', '--ignore-not-found', '--wait=true', '--timeout=120s'])
    .catch(quiet);
  await k.kubectl(['wait', '--for=delete', 'pods', '--all', '-n', NAMESPACE, '--timeout=180s']).catch(quiet);
  await k.kubectl(['delete', 'namespace', NAMESPACE, '--ignore-not-found', '--wait=false']).catch(quiet);
}, 360_000);

describe('the quick start on a real single-node cluster', () => {
  it("examples/quickstart applied as it stands reaches Ready, both pools on the chart's default worker image", async () => {
    await installChart(k, cluster);
    await k.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } }));
    await k.kubectl(['apply', '-n', NAMESPACE, '-f', 'examples/quickstart/']);
    try {
      await k.kubectl(['wait', 'vwp', '--all', '-n', NAMESPACE, '--for=condition=Ready', '--timeout=600s']);
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${await diagnostics()}`, { cause: err });
    }
    const table = (await k.kubectl(['get', 'vwp', '-n', NAMESPACE]))
      .trim()
      .split('\n')
      .map((line) => line.trim().split(/\s+/));
    const ready = table[0]!.indexOf('READY');
    expect(table.slice(1).map((row) => [row[0], row[ready]])).toEqual(POOLS.map((name) => [name, '1']));

    // The pools name no image: the operator gave them the chart's workerImage, workers and speech server alike.
    for (const name of [...POOLS, 'interviews-private-speech']) {
      const deployment = await k.getJson<{
        spec: { template: { spec: { containers: Array<{ image: string }> } } };
        status: { availableReplicas?: number };
      }>(['deployment', name, '-n', NAMESPACE]);
      expect(deployment.spec.template.spec.containers[0]!.image, name).toBe(cluster.images.worker);
      expect(deployment.status.availableReplicas, name).toBe(1);
    }
    const speech = await k.getJson<{ status: { conditions: Array<{ type: string; status: string }> } }>([
      'vwp',
      'interviews-private',
      '-n',
      NAMESPACE,
    ]);
    expect(speech.status.conditions.find((c) => c.type === 'SpeechReady')?.status).toBe('True');
  }, 900_000);
});
