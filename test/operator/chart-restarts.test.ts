/**
 * Which chart values restart every pool's workers (issue 38): a value that reaches the pods the
 * operator builds rolls out every pool in every namespace at once. The chart is rendered with each
 * value that reaches the operator's environment changed, the operator's configuration loaded from
 * it as main.ts does, and the pods it would build compared; docs/operator.md names the ones found.
 */
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { loadConfig } from '../../operator/config.ts';
import { desiredState } from '../../operator/resources/index.ts';
import { withWorkerImage } from '../../operator/resources/options.ts';
import { helm, WITH_REGISTRY } from './helpers.ts';
import { poolFixture } from './pool-fixture.ts';
import { CHART } from './validators/renders.ts';

interface Doc {
  kind: string;
  spec?: { template?: { spec: { containers: Array<{ env?: Array<{ name: string; value?: string; valueFrom?: unknown }> }> } } };
}

/** The operator container's environment (plain values) as the chart renders it with `args`. */
async function operatorEnv(...args: string[]): Promise<Record<string, string>> {
  const out = await helm(['template', 'vo', CHART, '--namespace', 'ops', ...WITH_REGISTRY, ...args]);
  const deployment = parseAllDocuments(out)
    .map((d) => d.toJSON() as Doc)
    .find((d) => d?.kind === 'Deployment')!;
  const env = deployment.spec!.template!.spec.containers[0]!.env ?? [];
  return Object.fromEntries(env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));
}

/** The pod templates (workers and speech server) of a pool with self-hosted speech, as the operator would build them. */
function podTemplates(env: Record<string, string>): string {
  const selfHosted = {
    enabled: true,
    tokenSecret: { name: 's', key: 'token' },
    replicas: 1,
    autoscaling: { enabled: true, minReplicas: 1, maxReplicas: 4, targetCPUUtilizationPercentage: 70 },
    resources: { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '2', memory: '1536Mi' } },
  };
  const build = loadConfig(env).build;
  const own = poolFixture({ speech: { selfHosted } });
  // A pool that leaves out spec.image runs the operator's default (the chart's workerImage).
  const { image: _image, ...imageless } = own.spec;
  const pools = [own, withWorkerImage({ ...own, spec: imageless as typeof own.spec }, build)!];
  const templates = pools.flatMap((pool) =>
    desiredState(pool, new Date('2030-01-01T00:00:00Z'), build).apply.filter((c) => c.kind === 'Deployment'),
  );
  return JSON.stringify(templates.map((d) => (d.spec as { template: unknown }).template));
}

/** Every value that reaches the operator's environment, each with another value than its default. */
const CHANGES: Record<string, string[]> = {
  'image.registry': ['--set', 'image.registry=mirror.example.com'],
  'image.tag': ['--set', 'image.tag=v1.4.0'],
  'workerImage.registry': ['--set', 'workerImage.registry=workers.example.com'],
  'workerImage.tag': ['--set', 'workerImage.tag=v1.3.1'],
  'workerImage.digest': ['--set', `workerImage.digest=sha256:${'e'.repeat(64)}`],
  watchNamespace: ['--set', 'watchNamespace=voice'],
  secretNamespaces: ['--set', 'secretNamespaces={a,b}'],
  'leaderElection.leaseName': ['--set', 'leaderElection.leaseName=other'],
  'leaderElection.leaseDurationSeconds': ['--set', 'leaderElection.leaseDurationSeconds=30'],
  'leaderElection.renewDeadlineSeconds': ['--set', 'leaderElection.renewDeadlineSeconds=12'],
  'leaderElection.retryPeriodSeconds': ['--set', 'leaderElection.retryPeriodSeconds=3'],
  'metrics.port': ['--set', 'metrics.port=8181'],
  'metrics.auth': ['--set', 'metrics.auth=none'],
  resyncSeconds: ['--set', 'resyncSeconds=600'],
  workers: ['--set', 'workers=8'],
  logLevel: ['--set', 'logLevel=debug'],
  shutdownTimeoutSeconds: ['--set', 'shutdownTimeoutSeconds=40'],
  'workerPods.readPodStatus': ['--set', 'workerPods.readPodStatus=false'],
  'workerPods.runAsUser': ['--set', 'workerPods.runAsUser=2000'],
  'workerPods.runAsUser (null)': ['--set', 'workerPods.runAsUser=null'],
  'workerPods.networkPolicy.enabled': ['--set', 'workerPods.networkPolicy.enabled=false'],
  'workerPods.networkPolicy.metricsNamespaces': ['--set', 'workerPods.networkPolicy.metricsNamespaces={prometheus}'],
};

describe("chart values and the pools' pods", () => {
  it(
    "only workerPods.runAsUser, and the worker image for pools without spec.image, reach the pools' pods (so changing them restarts those " +
      'pools)',
    async () => {
      const base = await operatorEnv();
      const pods = podTemplates(base);
      const restarting: string[] = [];
      const reached = new Set<string>();
      for (const [value, args] of Object.entries(CHANGES)) {
        const env = await operatorEnv(...args);
        for (const name of new Set([...Object.keys(base), ...Object.keys(env)])) if (base[name] !== env[name]) reached.add(name);
        if (podTemplates(env) !== pods) restarting.push(value);
      }
      expect(restarting).toEqual([
        'image.registry',
        'image.tag',
        'workerImage.registry',
        'workerImage.tag',
        'workerImage.digest',
        'workerPods.runAsUser',
        'workerPods.runAsUser (null)',
      ]);
      // Every variable the chart gives the operator was changed by one of the values above, so a new
      // value that reaches the operator cannot slip past this test.
      expect(
        Object.keys(base)
          .filter((name) => !reached.has(name))
          .sort(),
      ).toEqual([]);
    },
  );
});
