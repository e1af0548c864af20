import { afterAll, describe, expect, inject, it } from 'vitest';
import { waitFor } from '../harness/ports.ts';
import { kubeCli, type KubeCli } from './kube-cli.ts';
import { installChart } from './pool-steps.ts';

/**
 * Status a person can act on, on a real node (issue 38): a pool whose image does not exist and a pool
 * no node can take each show their reason in the REASON column of `kubectl get vwp`, where both
 * used to show the same `0 1 <endpoint>` as a pool that is starting.
 */
const NAMESPACE = 'voice-status';
const cluster = inject('cluster');
const k: KubeCli = kubeCli(cluster);

const pool = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'voice.service.io/v1beta1',
  kind: 'VoiceWorkerPool',
  metadata: { name, namespace: NAMESPACE },
  spec: {
    replicas: 1,
    roomProvider: 'local',
    resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '1', memory: '768Mi' } },
    secrets: { workerToken: { name: 'worker' }, openaiApiKey: { name: 'providers', key: 'openai' } },
    redis: { url: 'redis://redis:6379' },
    backendUrl: 'https://app.service.example',
    ...spec,
  },
});

afterAll(async () => {
  const quiet = (err: Error) => console.warn(err.message);
  await k.kubectl(['delete', 'vwp', '--all', '-n', NAMESPACE, '--ignore-not-found', '--wait=true', '--timeout=120s']).catch(quiet);
  await k.kubectl(['wait', '--for=delete', 'pods', '--all', '-n', NAMESPACE, '--timeout=120s']).catch(quiet);
  await k.kubectl(['delete', 'namespace', NAMESPACE, '--ignore-not-found', '--wait=false']).catch(quiet);
}, 300_000);

describe('a broken pool says why in kubectl get vwp', () => {
  it('an image that does not exist shows ImagePullError, a pool no node takes shows Unschedulable', async () => {
    await installChart(k, cluster);
    await k.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } }));
    await k.kubectl(['apply', '-n', NAMESPACE, '-f', 'examples/quickstart/secrets.yaml']);
    const workerRepository = cluster.images.worker.slice(0, cluster.images.worker.lastIndexOf(':'));
    await k.kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [
          pool('no-image', { image: { repository: workerRepository, tag: 'does-not-exist' } }),
          // 64 CPUs: more than the node has (and the default image, which exists).
          pool('too-big', { resources: { requests: { cpu: '64', memory: '128Mi' }, limits: { cpu: '64', memory: '768Mi' } } }),
        ],
      }),
    );
    let table: string[][] = [];
    const reasons = () => {
      const reason = table[0]?.indexOf('REASON') ?? -1;
      return Object.fromEntries(table.slice(1).map((row) => [row[0], row[reason]]));
    };
    await waitFor(
      async () => {
        table = (await k.kubectl(['get', 'vwp', '-n', NAMESPACE]))
          .trim()
          .split('\n')
          .map((line) => line.trim().split(/\s+/));
        const r = reasons();
        return r['no-image'] === 'ImagePullError' && r['too-big'] === 'Unschedulable';
      },
      {
        timeoutMs: 180_000,
        intervalMs: 1000,
        what: `ImagePullError and Unschedulable in kubectl get vwp (last: ${JSON.stringify(table)})`,
      },
    ).catch(async (err: Error) => {
      throw new Error(
        `${err.message}\n${JSON.stringify(table)}\n${await k.kubectl(['get', 'pods', '-n', NAMESPACE, '-o', 'wide']).catch(() => '')}`,
      );
    });
    expect(reasons()).toEqual({ 'no-image': 'ImagePullError', 'too-big': 'Unschedulable' });
  }, 400_000);
});
