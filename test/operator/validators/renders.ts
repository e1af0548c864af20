/**
 * What the validators check: the chart rendered with its defaults, with every values file in
 * examples/chart/ and with the values shown in the docs (the chart README's values blocks and the
 * pool of docs/operator.md), and the objects the operator's pure builders make for a set of pools.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { desiredState, type BuildOptions } from '../../../operator/resources/index.ts';
import type { VoiceWorkerPool } from '../../../operator/types.ts';
import { REPO_ROOT } from '../../harness/kube-binaries.ts';
import { poolFixture } from '../pool-fixture.ts';

export const CHART = join(REPO_ROOT, 'charts/voice-operator');
const scratch = mkdtempSync(join(tmpdir(), 'voice-validators-'));

export interface ValuesCase {
  name: string;
  /** helm arguments: `-f <file>`, or none for the defaults. */
  args: string[];
}

function valuesFile(name: string, values: unknown): string {
  const file = join(scratch, `${name.replace(/[^a-z0-9.-]+/gi, '_')}.yaml`);
  writeFileSync(file, stringify(values));
  return file;
}

/** ```yaml blocks of a Markdown file. */
function yamlBlocks(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** The VoiceWorkerPool documented in docs/operator.md, as written there. */
export function docsPool(): { metadata: { name: string; namespace: string }; spec: Record<string, unknown> } {
  const pools = yamlBlocks(join(REPO_ROOT, 'docs/operator.md'))
    .flatMap((b) => parseAllDocuments(b).map((d) => d.toJSON() as { kind?: string }))
    .filter((d) => d?.kind === 'VoiceWorkerPool');
  if (pools.length === 0) throw new Error('docs/operator.md shows no VoiceWorkerPool');
  return pools[0] as ReturnType<typeof docsPool>;
}

export function valuesCases(): ValuesCase[] {
  const dir = join(REPO_ROOT, 'examples/chart');
  const examples = readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort();
  if (examples.length === 0) throw new Error('examples/chart/ holds no values file');
  // The README's values examples start with the line `# values`.
  const readme = yamlBlocks(join(CHART, 'README.md')).filter((b) => b.startsWith('# values'));
  const pool = docsPool();
  return [
    { name: 'defaults', args: [] },
    ...examples.map((f) => ({ name: `examples/chart/${f}`, args: ['-f', join(dir, f)] })),
    ...readme.map((b, i) => ({ name: `chart README block ${i + 1}`, args: ['-f', valuesFile(`readme-${i + 1}`, parse(b))] })),
    {
      name: 'docs/operator.md pool',
      args: ['-f', valuesFile('docs-pool', { pool: { enabled: true, name: pool.metadata.name, spec: pool.spec } })],
    },
  ];
}

/** Pools that between them make every kind of child and every optional part of one. */
function pools(): VoiceWorkerPool[] {
  const autoscaling = {
    enabled: true,
    minReplicas: 2,
    maxReplicas: 20,
    targetCPUUtilizationPercentage: 70,
    targetBusySessionsPerPod: 2,
    scaleDown: { stabilizationWindowSeconds: 300, maxPercentPerMinute: 10 },
  };
  const named = (name: string, p: VoiceWorkerPool): VoiceWorkerPool => ({ ...p, metadata: { ...p.metadata, name, uid: `uid-${name}` } });
  return [
    named('local', poolFixture()),
    named(
      'livekit',
      poolFixture({
        roomProvider: 'livekit',
        livekit: { url: 'wss://rooms.example.com', secretName: 'livekit', apiKeyKey: 'apiKey', apiSecretKey: 'apiSecret' },
        ingress: {
          host: 'voice.example.com',
          tlsSecretName: 'voice-tls',
          className: 'nginx',
          annotations: { 'nginx.ingress.kubernetes.io/proxy-read-timeout': '3600' },
        },
        autoscaling,
        podTLS: { secretName: 'pod-tls' },
        transcriptStore: 's3://bucket/prefix',
        image: {
          repository: 'registry.example.com/voice-worker',
          tag: 'v1.3.0',
          digest: `sha256:${'a'.repeat(64)}`,
          pullSecrets: ['registry'],
        },
      }),
    ),
    named(
      'daily',
      poolFixture({
        roomProvider: 'daily',
        secrets: {
          workerToken: { name: 'w', key: 'token' },
          roomApiKey: { name: 'rooms', key: 'daily' },
          openaiApiKey: { name: 'ai', key: 'key' },
        },
        resources: {
          requests: { cpu: '2', memory: '4Gi' },
          limits: { cpu: '4', memory: '8Gi' },
          gpu: { count: 1, resourceName: 'nvidia.com/gpu' },
        },
        placement: {
          nodeSelector: { pool: 'voice' },
          topologySpreadConstraints: [
            {
              maxSkew: 1,
              topologyKey: 'kubernetes.io/hostname',
              whenUnsatisfiable: 'ScheduleAnyway',
              labelSelector: { matchLabels: { 'app.kubernetes.io/name': 'voice-worker' } },
            },
          ],
        },
      }),
    ),
    // Self-hosted speech: <pool>-speech Deployment, Service, HPA (and NetworkPolicy), GPU and placement passed through.
    named(
      'speech',
      poolFixture({
        secrets: { workerToken: { name: 'w', key: 'token' }, llmApiKey: { name: 'ai', key: 'llm' } },
        speech: {
          selfHosted: {
            enabled: true,
            tokenSecret: { name: 'speech', key: 'token' },
            replicas: 1,
            autoscaling: { enabled: true, minReplicas: 1, maxReplicas: 4, targetCPUUtilizationPercentage: 70 },
            resources: {
              requests: { cpu: '1', memory: '1Gi' },
              limits: { cpu: '2', memory: '1536Mi' },
              gpu: { count: 1, resourceName: 'nvidia.com/gpu' },
            },
            placement: {
              nodeSelector: { accelerator: 'gpu' },
              tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
            },
            sttConcurrency: 2,
          },
        },
      }),
    ),
  ];
}

/** The builders' objects as multi-document YAML, under the chart's default build options and OpenShift's. */
export function operatorObjects(): { name: string; yaml: string }[] {
  const optionSets: Array<[string, BuildOptions]> = [
    ['chart defaults', { runAsUser: 1000, networkPolicy: { metricsNamespaces: ['monitoring'] } }],
    ['ids left to the platform', { networkPolicy: { metricsNamespaces: [] } }],
  ];
  const now = new Date('2030-01-01T00:00:00Z');
  return optionSets.map(([name, options]) => ({
    name: `operator objects (${name})`,
    yaml: pools()
      .flatMap((p) => desiredState(p, now, options).apply)
      .map((o) => stringify(o))
      .join('---\n'),
  }));
}

/** Writes text to a file of the scratch folder and returns its path. */
export function scratchFile(name: string, text: string): string {
  const file = join(scratch, name.replace(/[^a-z0-9.-]+/gi, '_'));
  writeFileSync(file, text);
  return file;
}
