/** The CRD installed with kubectl into a real API server: defaults, validation, printer columns. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeClient } from '../../operator/kube.ts';
import { poolPath } from '../../operator/reconcile.ts';
import type { VoiceWorkerPool } from '../../operator/types.ts';
import { REPO_ROOT } from '../harness/kube-binaries.ts';
import { adminClient, createNamespace, createPool, ensureCrd, eventually, kubectl, poolSpec } from './helpers.ts';

let kube: KubeClient;
let ns: string;

beforeAll(async () => {
  kube = await adminClient();
  await ensureCrd(kube);
  ns = await createNamespace(kube, 'crd');
});
afterAll(() => kube?.close());

/** The API server's rejection message for a pool spec (fails the test if it is accepted). */
async function rejection(spec: Record<string, unknown>): Promise<string> {
  try {
    await createPool(kube, ns, `bad-${Math.random().toString(36).slice(2, 8)}`, spec);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('the API server accepted an invalid pool');
}

describe('VoiceWorkerPool CRD', () => {
  it('installs with a plain kubectl apply -f crds/ and is served under its short name', async () => {
    expect(await kubectl(['apply', '-f', 'crds/'])).toMatch(
      /customresourcedefinition\.apiextensions\.k8s\.io\/voiceworkerpools\.voice\.service\.io (created|configured|unchanged|serverside-applied)/,
    );
    const resources = await kubectl(['api-resources', '--api-group=voice.service.io', '-o', 'wide']);
    expect(resources).toMatch(/voiceworkerpools\s+vwp\s+voice\.service\.io\/v1beta1\s+true\s+VoiceWorkerPool/);
  });

  it('defaults what has a default', async () => {
    const pool = await createPool(
      kube,
      ns,
      'defaults',
      poolSpec({ autoscaling: { maxReplicas: 10 }, sizing: { p95ConcurrentSessions: 5 }, preScaling: {} }),
    );
    expect(pool.spec.image.tag).toBe('v1.3.0');
    expect(pool.spec.replicas).toBe(3);
    expect(pool.spec.resources).toEqual({ requests: { cpu: '2', memory: '4Gi' }, limits: { cpu: '4', memory: '8Gi' } });
    expect(pool.spec.autoscaling).toMatchObject({
      enabled: true,
      minReplicas: 1,
      targetCPUUtilizationPercentage: 70,
      scaleDown: { stabilizationWindowSeconds: 300 },
    });
    // sessionsPerReplica has no default: unset, the operator derives it from the requests (operator/capacity.ts).
    expect(pool.spec.sizing).toEqual({ p95ConcurrentSessions: 5, headroomPercent: 20 });
    expect(pool.spec.preScaling).toEqual({ leadSeconds: 300, windows: [] });
    expect(pool.spec.secrets.workerToken.key).toBe('token');
    expect(pool.spec.terminationGracePeriodSeconds).toBe(1800);
    expect(pool.spec.telemetry).toBeUndefined();
  });

  it('rejects a pool without its required fields, naming each', async () => {
    const message = await rejection({ image: { repository: 'x' } });
    expect(message).toContain('spec.secrets: Required value');
    expect(message).toContain('spec.backendUrl: Required value');
    expect(message).toContain('spec.redis: Required value');
  });

  it('rejects values out of range or of the wrong type', async () => {
    expect(await rejection(poolSpec({ replicas: -1 }))).toContain('spec.replicas: Invalid value: -1');
    expect(await rejection(poolSpec({ autoscaling: { maxReplicas: 5, targetCPUUtilizationPercentage: 150 } }))).toContain(
      'spec.autoscaling.targetCPUUtilizationPercentage',
    );
    expect(await rejection(poolSpec({ maxSessionSeconds: 'long' }))).toContain('spec.maxSessionSeconds: Invalid value: "string"');
    expect(await rejection(poolSpec({ sizing: { p95ConcurrentSessions: 10, sessionsPerReplica: 300 } }))).toContain(
      'spec.sizing.sessionsPerReplica',
    );
    expect(await rejection(poolSpec({ livekit: { url: 'https://lk.example.com', secretName: 'lk' }, roomProvider: 'livekit' }))).toContain(
      'spec.livekit.url',
    );
    expect(await rejection(poolSpec({ ingress: { host: 'Not A Host', tlsSecretName: 'tls' } }))).toContain('spec.ingress.host');
    expect(await rejection(poolSpec({ ingress: { host: 'voice.example.com' } }))).toContain('spec.ingress.tlsSecretName: Required value');
    expect(await rejection(poolSpec({ backendUrl: 'ftp://x' }))).toContain('spec.backendUrl');
    expect(await rejection(poolSpec({ roomProvider: 'other' }))).toContain('spec.roomProvider: Unsupported value: "other"');
  });

  it('applies the rules that span fields (CEL)', async () => {
    expect(await rejection(poolSpec({ autoscaling: { minReplicas: 8, maxReplicas: 4 } }))).toContain(
      'autoscaling.minReplicas must be at most autoscaling.maxReplicas',
    );
    expect(await rejection(poolSpec({ redis: { url: 'redis://r', urlSecret: { name: 'r', key: 'url' } } }))).toContain(
      'set at most one of redis.url and redis.urlSecret',
    );
    expect(await rejection(poolSpec({ redis: {} }))).toContain('set redis.url or redis.urlSecret (or redis.sentinel)');
    expect(await rejection(poolSpec({ extraEnv: [{ name: 'A' }] }))).toContain(
      'an extraEnv entry needs exactly one of value and valueFrom',
    );
    expect(await rejection(poolSpec({ transcriptStore: '/data' }))).toContain('spec.transcriptStore');
    const window = { start: '2030-01-01T10:00:00Z', end: '2030-01-01T09:00:00Z', replicas: 4 };
    expect(await rejection(poolSpec({ preScaling: { windows: [window] } }))).toContain('a pre-scaling window must end after it starts');
    const big = { start: '2030-01-01T10:00:00Z', end: '2030-01-01T11:00:00Z', replicas: 40 };
    expect(await rejection(poolSpec({ autoscaling: { maxReplicas: 10 }, preScaling: { windows: [big] } }))).toContain(
      "every pre-scaling window's replicas must be at most autoscaling.maxReplicas",
    );
  });

  it('refuses at admission what the operator would only find later (CEL)', async () => {
    // ceil(10 x 1.2 / 1) = 12 workers cannot fit under maxReplicas 3; 11 x 1.2 / 4 = 3.3 needs 4.
    expect(
      await rejection(poolSpec({ autoscaling: { maxReplicas: 3 }, sizing: { p95ConcurrentSessions: 10, sessionsPerReplica: 1 } })),
    ).toContain('the replica floor from sizing');
    // Unset, sessionsPerReplica comes from the requests, which CEL cannot weigh: admitted, and the
    // operator checks the floor (operator/validate.test.ts).
    await createPool(kube, ns, 'derived', poolSpec({ autoscaling: { maxReplicas: 3 }, sizing: { p95ConcurrentSessions: 10 } }));
    expect(
      await rejection(poolSpec({ autoscaling: { maxReplicas: 3 }, sizing: { p95ConcurrentSessions: 11, sessionsPerReplica: 4 } })),
    ).toContain('the replica floor from sizing');
    await createPool(
      kube,
      ns,
      'fits',
      poolSpec({ autoscaling: { maxReplicas: 3 }, sizing: { p95ConcurrentSessions: 10, sessionsPerReplica: 4 } }),
    );
    expect(await rejection(poolSpec({ extraEnv: [{ name: 'WORKER_TOKEN', value: 'mine' }] }))).toContain(
      "this name is set by the operator from the pool's fields",
    );
    expect(await rejection(poolSpec({ extraEnv: [{ name: 'DRAIN_GRACE_SECONDS', value: '5' }] }))).toContain(
      "this name is set by the operator from the pool's fields",
    );
    expect(await rejection(poolSpec({ roomProvider: 'daily' }))).toContain('roomProvider daily needs secrets.roomApiKey');
    expect(await rejection(poolSpec({ roomProvider: 'livekit', livekit: undefined }))).toContain(
      'roomProvider livekit needs livekit.url and livekit.secretName',
    );
    // Several sessions per bot process (issue 22) is refused with Daily rooms, whose bots hold one bridge each.
    const daily = { roomProvider: 'daily', secrets: { roomApiKey: { name: 'd', key: 'k' } } };
    expect(await rejection(poolSpec({ ...daily, extraEnv: [{ name: 'BOT_SESSIONS_PER_PROCESS', value: '4' }] }))).toContain(
      'roomProvider daily runs one session per bot process',
    );
    await createPool(
      kube,
      ns,
      'daily-one-per-process',
      poolSpec({ ...daily, extraEnv: [{ name: 'BOT_SESSIONS_PER_PROCESS', value: '1' }] }),
    );
    await createPool(
      kube,
      ns,
      'livekit-shared',
      poolSpec({
        roomProvider: 'livekit',
        livekit: { url: 'wss://lk.example.com', secretName: 'lk' },
        extraEnv: [{ name: 'BOT_SESSIONS_PER_PROCESS', value: '4' }],
      }),
    );
    expect(await rejection(poolSpec({ secrets: { openaiApiKey: undefined } }))).toContain('the worker needs a model key');
    const schedule = { cron: '0 9 * * 1-5', timeZone: 'Europe/Berlin', durationMinutes: 120, replicas: 8 };
    expect(await rejection(poolSpec({ autoscaling: { maxReplicas: 5 }, preScaling: { schedules: [schedule] } }))).toContain(
      "every pre-scaling schedule's replicas must be at most autoscaling.maxReplicas",
    );
    expect(await rejection(poolSpec({ preScaling: { schedules: [{ ...schedule, cron: '0 9 * *' }] } }))).toContain(
      'spec.preScaling.schedules[0].cron',
    );
    const scheduled = await createPool(
      kube,
      ns,
      'scheduled',
      poolSpec({ preScaling: { schedules: [{ ...schedule, timeZone: undefined }] } }),
    );
    expect(scheduled.spec.preScaling?.schedules?.[0]?.timeZone).toBe('UTC');
    const livekit = await createPool(
      kube,
      ns,
      'rooms-livekit',
      poolSpec({ roomProvider: 'livekit', livekit: { url: 'wss://lk.example.com', secretName: 'lk' } }),
    );
    expect(livekit.spec.livekit).toEqual({ url: 'wss://lk.example.com', secretName: 'lk', apiKeyKey: 'apiKey', apiSecretKey: 'apiSecret' });
  });

  it('refuses extraEnv names that reach a loader or a start-up hook, through either version and server-side apply', async () => {
    const hook = { name: 'NODE_OPTIONS', value: '--import=data:text/javascript,process.exit(0)' };
    expect(await rejection(poolSpec({ extraEnv: [hook] }))).toContain("this name changes how the worker's processes start");
    for (const name of [
      'LD_PRELOAD',
      'LD_LIBRARY_PATH',
      'LD_AUDIT',
      'NODE_PATH',
      'PYTHONPATH',
      'PYTHONSTARTUP',
      'BASH_ENV',
      'OPENSSL_CONF',
      'PATH',
      'DAILY_BRIDGE_PYTHON',
    ]) {
      expect(await rejection(poolSpec({ extraEnv: [{ name, value: '/tmp/x' }] })), name).toContain(
        "this name changes how the worker's processes start",
      );
    }
    // The same schema serves v1alpha1, and an apply or a patch of an existing pool meets the rule too.
    const alpha = await kube
      .request('POST', `/apis/voice.service.io/v1alpha1/namespaces/${ns}/voiceworkerpools`, {
        body: {
          apiVersion: 'voice.service.io/v1alpha1',
          kind: 'VoiceWorkerPool',
          metadata: { name: 'alpha-hook' },
          spec: poolSpec({ extraEnv: [hook] }),
        },
      })
      .then(
        () => 'accepted',
        (err: Error) => err.message,
      );
    expect(alpha).toContain("this name changes how the worker's processes start");
    await createPool(
      kube,
      ns,
      'plain-env',
      poolSpec({
        extraEnv: [
          { name: 'AWS_REGION', value: 'eu-west-1' },
          { name: 'UV_THREADPOOL_SIZE', value: '8' },
        ],
      }),
    );
    await expect(kube.mergePatch(poolPath(ns, 'plain-env'), { spec: { extraEnv: [hook] } })).rejects.toThrow(
      /this name changes how the worker's processes start/,
    );
    const applied = {
      apiVersion: 'voice.service.io/v1alpha1',
      kind: 'VoiceWorkerPool',
      metadata: { name: 'plain-env' },
      spec: poolSpec({ extraEnv: [{ name: 'LD_PRELOAD', value: '/tmp/x.so' }] }),
    };
    await expect(
      kube.apply(`/apis/voice.service.io/v1alpha1/namespaces/${ns}/voiceworkerpools/plain-env`, applied, 'tenant'),
    ).rejects.toThrow(/this name changes how the worker's processes start/);
  });

  it('refuses a pool name that cannot name its Service (DNS-1035, at most 63 characters)', async () => {
    const named = async (name: string) =>
      createPool(kube, ns, name, poolSpec()).then(
        () => 'accepted',
        (err: Error) => err.message,
      );
    expect(await named('9lives')).toContain("the pool's name must be a DNS-1035 label");
    expect(await named('a.b')).toContain("the pool's name must be a DNS-1035 label");
    expect(await named(`p${'x'.repeat(63)}`)).toContain("the pool's name must be a DNS-1035 label");
    expect(await named(`p${'x'.repeat(62)}`)).toBe('accepted');
  });

  it('shows ready replicas, floor, the Ready reason and endpoint as printer columns', async () => {
    await createPool(kube, ns, 'printed', poolSpec());
    const ready = { type: 'Ready', status: 'False', reason: 'ImagePullError', message: 'm', lastTransitionTime: '2030-01-01T00:00:00Z' };
    const degraded = { ...ready, type: 'Degraded', status: 'True', reason: 'Other' };
    await kube.mergePatch(poolPath(ns, 'printed', 'status'), {
      status: { readyReplicas: 2, desiredFloor: 3, endpoint: 'https://voice.example.com/', conditions: [degraded, ready] },
    });
    const table = await kubectl(['get', 'voiceworkerpools.voice.service.io', 'printed', '-n', ns]);
    expect(table).toMatch(/NAME\s+READY\s+FLOOR\s+REASON\s+ENDPOINT\s+AGE/);
    expect(table).toMatch(/printed\s+2\s+3\s+ImagePullError\s+https:\/\/voice\.example\.com\/\s+\d+s/);
    const stored = await kube.get<VoiceWorkerPool>(poolPath(ns, 'printed'));
    expect(stored.status?.desiredFloor).toBe(3);
  });
});

describe('CRD upgrade (Helm never upgrades crds/: a server-side apply does)', () => {
  // Under a group of its own, so the old schema never reaches the other tests' pools.
  const GROUP = 'upgrade.voice.test';
  const retarget = (yaml: string) => yaml.replaceAll('voice.service.io', GROUP);
  const path = (ns: string, name?: string) => `/apis/${GROUP}/v1alpha1/namespaces/${ns}/voiceworkerpools${name ? `/${name}` : ''}`;

  it('keeps pools of the previous release readable and editable after applying crds/ server-side', async () => {
    const old = retarget(readFileSync(join(REPO_ROOT, 'test/operator/fixtures/voiceworkerpools-v1.3.0.yaml'), 'utf8'));
    await kubectl(['apply', '--server-side', '-f', '-'], { input: old });
    const served = () =>
      kube.get<{ resources: Array<{ name: string }> }>(`/apis/${GROUP}/v1alpha1`).then(
        (r) => r.resources.length > 0,
        () => false,
      );
    await eventually(served, (ok) => ok, 'the old CRD served');
    const upgradeNs = await createNamespace(kube, 'upgrade');
    const create = (name: string, spec: Record<string, unknown>) =>
      kube.request('POST', path(upgradeNs), {
        body: { apiVersion: `${GROUP}/v1alpha1`, kind: 'VoiceWorkerPool', metadata: { name }, spec },
      });
    // What v1.3.0 accepted: warmPoolSize, and a daily pool with all its keys; and one that could never run (no model key).
    await create('runs', {
      ...poolSpec({ roomProvider: 'daily', warmPoolSize: 3 }),
      secrets: { workerToken: { name: 'w' }, openaiApiKey: { name: 'm', key: 'k' }, roomApiKey: { name: 'd', key: 'k' } },
    });
    await create('broken', { ...poolSpec(), roomProvider: 'daily', secrets: { workerToken: { name: 'w' } } });

    const out = await kubectl(['apply', '--server-side', '--force-conflicts', '-f', '-'], {
      input: retarget(readFileSync(join(REPO_ROOT, 'crds/voice.service.io_voiceworkerpools.yaml'), 'utf8')),
    });
    expect(out).toMatch(/serverside-applied/);
    const runs = await eventually(
      () => kube.get<VoiceWorkerPool>(path(upgradeNs, 'runs')),
      (p) => (p.spec as { warmPoolSize?: number }).warmPoolSize === undefined,
      'warmPoolSize pruned on read',
    );
    expect(runs.spec.autoscaling).toBeUndefined();
    await kube.mergePatch(path(upgradeNs, 'runs'), { spec: { replicas: 5, sizing: { p95ConcurrentSessions: 6, sessionsPerReplica: 3 } } });
    // The old pool that could never run stays readable, takes a label (CEL ratcheting), and an edit
    // of its spec is told what it lacks.
    await kube.mergePatch(path(upgradeNs, 'broken'), { metadata: { labels: { team: 'voice' } } });
    await expect(kube.mergePatch(path(upgradeNs, 'broken'), { spec: { replicas: 4 } })).rejects.toThrow(
      /roomProvider daily needs secrets.roomApiKey|the worker needs a model key/,
    );

    // The pools of the old version read the same at the new one, and the migration of docs/operator.md
    // ("Versions") rewrites them in the storage version and retires v1alpha1 from storedVersions.
    const beta = (ns: string, name: string) => `/apis/${GROUP}/v1beta1/namespaces/${ns}/voiceworkerpools/${name}`;
    const asBeta = await kube.get<VoiceWorkerPool>(beta(upgradeNs, 'runs'));
    expect(asBeta.apiVersion).toBe(`${GROUP}/v1beta1`);
    expect(asBeta.spec).toEqual((await kube.get<VoiceWorkerPool>(path(upgradeNs, 'runs'))).spec);
    const crdName = `voiceworkerpools.${GROUP}`;
    const storedVersions = async () =>
      (await kube.get<{ status: { storedVersions: string[] } }>(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crdName}`))
        .status.storedVersions;
    expect((await storedVersions()).sort()).toEqual(['v1alpha1', 'v1beta1']);
    const all = await kubectl(['get', `voiceworkerpools.${GROUP}`, '-n', upgradeNs, '-o', 'json']);
    expect(await kubectl(['replace', '-f', '-'], { input: all })).toMatch(/replaced/);
    await kubectl(['patch', 'crd', crdName, '--subresource=status', '--type=merge', '-p', '{"status":{"storedVersions":["v1beta1"]}}']);
    expect(await storedVersions()).toEqual(['v1beta1']);
    expect((await kube.get<VoiceWorkerPool>(beta(upgradeNs, 'runs'))).spec.replicas).toBe(5);
  });

  it('serves v1alpha1 and v1beta1 from one schema, and warns who still uses v1alpha1', async () => {
    const crd = parseYaml(readFileSync(join(REPO_ROOT, 'crds/voice.service.io_voiceworkerpools.yaml'), 'utf8')) as {
      spec: {
        conversion: { strategy: string };
        versions: Array<{
          name: string;
          served: boolean;
          storage: boolean;
          schema: unknown;
          subresources: unknown;
          additionalPrinterColumns: unknown;
        }>;
      };
    };
    const [alpha, beta] = crd.spec.versions;
    expect([alpha!.name, beta!.name]).toEqual(['v1alpha1', 'v1beta1']);
    expect(beta!.storage && !alpha!.storage && alpha!.served).toBe(true);
    // Without a conversion webhook, a difference between the two schemas would lose fields on the way.
    expect(crd.spec.conversion.strategy).toBe('None');
    expect(beta!.schema).toEqual(alpha!.schema);
    expect(beta!.subresources).toEqual(alpha!.subresources);
    expect(beta!.additionalPrinterColumns).toEqual(alpha!.additionalPrinterColumns);
    const warnings: string[] = [];
    const off = kube.observe({ onWarning: (w) => warnings.push(w) });
    try {
      await kube.get('/apis/voice.service.io/v1alpha1/voiceworkerpools');
    } finally {
      off();
    }
    expect(warnings.join('\n')).toMatch(/v1alpha1 VoiceWorkerPool is deprecated; use voice.service.io\/v1beta1/);
  });
});
