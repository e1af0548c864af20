/**
 * The session store as a platform team configures it (docs/worker.md, "Session store"), against the
 * real API server and the real helm: the CRD admits a Sentinel pool and refuses contradictory
 * Redis settings; the chart's evaluation Redis is off by default, and when on, the chart's pool uses it.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { KubeClient } from '../../operator/kube.ts';
import { REPO_ROOT } from '../harness/kube-binaries.ts';
import { adminClient, createNamespace, createPool, ensureCrd, helm, kubectl, poolSpec, WITH_REGISTRY } from './helpers.ts';

const CHART = join(REPO_ROOT, 'charts/voice-operator');
let kube: KubeClient;
let namespace: string;

beforeAll(async () => {
  kube = await adminClient();
  await ensureCrd(kube);
  namespace = await createNamespace(kube, 'redis-store');
});
afterAll(() => kube?.close());

describe('spec.redis in the CRD', () => {
  it('admits a Sentinel pool with ACL user, password Secret and TLS, with no URL', async () => {
    const pool = await createPool(
      kube,
      namespace,
      'sentinel',
      poolSpec({
        redis: {
          sentinel: {
            hosts: ['redis-sentinel-0.redis:26379', 'redis-sentinel-1.redis'],
            passwordSecret: { name: 'redis', key: 'sentinel' },
            tls: true,
          },
          username: 'voice',
          passwordSecret: { name: 'redis', key: 'password' },
          tls: { enabled: true, caSecret: { name: 'redis', key: 'ca.crt' } },
        },
      }),
    );
    // The API server applies the defaults.
    expect(pool.spec.redis.sentinel).toMatchObject({ masterName: 'mymaster', tls: true });
  });

  it('refuses both url and urlSecret, neither with no Sentinel, and a Sentinel that is not host:port', async () => {
    await expect(
      createPool(kube, namespace, 'both', poolSpec({ redis: { url: 'redis://r:6379', urlSecret: { name: 'r', key: 'url' } } })),
    ).rejects.toThrow(/at most one of redis.url and redis.urlSecret/);
    await expect(createPool(kube, namespace, 'neither', poolSpec({ redis: {} }))).rejects.toThrow(/set redis.url or redis.urlSecret/);
    await expect(createPool(kube, namespace, 'badhost', poolSpec({ redis: { sentinel: { hosts: ['http://x:1'] } } }))).rejects.toThrow(
      /hosts/,
    );
    await expect(createPool(kube, namespace, 'nohost', poolSpec({ redis: { sentinel: { hosts: [] } } }))).rejects.toThrow(/hosts/);
  });
});

describe("the chart's evaluation Redis", () => {
  type Doc = {
    kind?: string;
    metadata?: { name: string; namespace?: string; annotations?: Record<string, string> };
    spec?: Record<string, unknown>;
  } | null;
  const render = async (...set: string[]): Promise<Doc[]> =>
    (await helm(['template', 'm', CHART, ...WITH_REGISTRY, '--namespace', namespace, ...set.flatMap((s) => ['--set', s])]))
      .split(/^---$/m)
      .map((d) => parse(d) as Doc)
      .filter((d) => d);
  const poolValues = [
    'pool.enabled=true',
    'pool.spec.image.repository=reg/voice-worker',
    'pool.spec.backendUrl=https://app.service.example',
    'pool.spec.roomProvider=local',
    'pool.spec.secrets.workerToken.name=worker',
    'pool.spec.secrets.openaiApiKey.name=models',
    'pool.spec.secrets.openaiApiKey.key=openai',
  ];

  it('is off by default, and a chart pool without spec.redis is then refused', async () => {
    expect((await render()).some((d) => d!.metadata?.name === 'm-voice-operator-redis')).toBe(false);
    await expect(helm(['template', 'm', CHART, ...WITH_REGISTRY, ...poolValues.flatMap((s) => ['--set', s])])).rejects.toThrow(/redis/);
  });

  it('when on, runs one Redis marked not for production and points the chart pool at it; the API server accepts all of it', async () => {
    const docs = await render('evaluationRedis.enabled=true', ...poolValues);
    const deployment = docs.find((d) => d!.kind === 'Deployment' && d!.metadata!.name === 'm-voice-operator-redis')!;
    expect(deployment.metadata!.annotations!['voice.service.io/not-for-production']).toBeTruthy();
    expect(docs.some((d) => d!.kind === 'Service' && d!.metadata!.name === 'm-voice-operator-redis')).toBe(true);
    const pool = docs.find((d) => d!.kind === 'VoiceWorkerPool')!;
    expect(pool.spec!.redis).toEqual({ url: `redis://m-voice-operator-redis.${namespace}.svc:6379` });
    // A pool's own spec.redis wins over the evaluation Redis.
    const own = (await render('evaluationRedis.enabled=true', ...poolValues, 'pool.spec.redis.url=redis://mine:6379')).find(
      (d) => d!.kind === 'VoiceWorkerPool',
    )!;
    expect(own.spec!.redis).toEqual({ url: 'redis://mine:6379' });
    // Server-side dry run of the Redis objects and the pool against the real API server (schema, CEL, Pod Security fields).
    const objects = docs.filter((d) => d!.metadata?.name === 'm-voice-operator-redis' || d!.kind === 'VoiceWorkerPool');
    const out = await kubectl(['apply', '--dry-run=server', '-n', namespace, '-f', '-'], {
      input: objects.map((o) => JSON.stringify(o)).join('\n'),
    });
    expect(out).toMatch(/deployment.apps\/m-voice-operator-redis created \(server dry run\)/);
    expect(out).toMatch(/voiceworkerpool.voice.service.io\/voice-worker created \(server dry run\)/);
  });
});
