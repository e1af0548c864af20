/**
 * The operator's /metrics behind the API server's own authentication and authorization, as
 * controller-runtime serves it (operator/metrics-auth.ts): the operator runs as the chart's service
 * account with the chart's RBAC, and a scraper bound by the chart's `metrics.readers` reads the
 * metrics with its service account token; a stranger's token is forbidden, a bad or missing one
 * unauthenticated, and the probes stay open for the kubelet.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { KubeClient } from '../../operator/kube.ts';
import { REPO_ROOT } from '../harness/kube-binaries.ts';
import {
  adminClient,
  createNamespace,
  ensureCrd,
  eventually,
  helm,
  kubeconfigFor,
  kubectl,
  runOperator,
  WITH_REGISTRY,
} from './helpers.ts';

const CHART = join(REPO_ROOT, 'charts/voice-operator');
let kube: KubeClient;

beforeAll(async () => {
  kube = await adminClient();
  await ensureCrd(kube);
});
afterAll(() => kube?.close());

async function serviceAccountToken(namespace: string, name: string): Promise<string> {
  await kube.request('POST', `/api/v1/namespaces/${namespace}/serviceaccounts`, {
    body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } },
  });
  const request = await kube.request<{ status: { token: string } }>(
    'POST',
    `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
    {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 600 } },
    },
  );
  return request.status.token;
}

describe('operator /metrics with METRICS_AUTH=kubernetes', () => {
  it('serves a bound reader, forbids a stranger, refuses a bad or missing token, and keeps the probes open', async () => {
    const ns = await createNamespace(kube, 'metrics-auth');
    const release = 'mx';
    const rendered = await helm([
      'template',
      release,
      CHART,
      ...WITH_REGISTRY,
      '--namespace',
      ns,
      '--skip-tests',
      '--set',
      `watchNamespace=${ns}`,
      '--set',
      'metrics.readers[0].kind=ServiceAccount',
      '--set',
      'metrics.readers[0].name=scraper',
      '--set',
      `metrics.readers[0].namespace=${ns}`,
    ]);
    await kubectl(['apply', '--server-side', '-n', ns, '-f', '-'], { input: rendered });
    const [scraper, stranger] = [await serviceAccountToken(ns, 'scraper'), await serviceAccountToken(ns, 'stranger')];

    const operatorIdentity = kubeconfigFor(`system:serviceaccount:${ns}:${release}-voice-operator`, [
      'system:serviceaccounts',
      `system:serviceaccounts:${ns}`,
    ]);
    const restricted = await KubeClient.fromKubeConfig(operatorIdentity);
    const operator = await runOperator(restricted, ns, { metricsAuth: 'kubernetes' });
    const get = async (path: string, token?: string) => {
      const res = await fetch(`http://127.0.0.1:${operator.port}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
      return { status: res.status, text: await res.text() };
    };
    try {
      // The chart's bindings reach the API server's RBAC cache within moments.
      const allowed = await eventually(
        () => get('/metrics', scraper),
        (r) => r.status === 200,
        'the bound scraper to read /metrics',
        15_000,
      );
      expect(allowed.text).toContain('leader_election_master_status');
      const forbidden = await get('/metrics', stranger);
      expect(forbidden.status).toBe(403);
      expect(JSON.parse(forbidden.text)).toMatchObject({ error: 'forbidden' });
      expect(forbidden.text).not.toContain(stranger);
      expect((await get('/metrics', 'not-a-token')).status).toBe(401);
      expect((await get('/metrics')).status).toBe(401);
      expect((await get('/healthz')).status).toBe(200);
      expect((await get('/readyz')).status).toBe(200);
    } finally {
      await operator.stop();
      restricted.close();
    }
  });
});

describe('operator /metrics under a flood of junk tokens', () => {
  it('reviews a few of them, answers the rest 429, and answers a repeated token from its cache', async () => {
    const ns = await createNamespace(kube, 'metrics-flood');
    const own = await adminClient();
    const operator = await runOperator(own, ns, { metricsAuth: 'kubernetes' });
    const reviews: string[] = [];
    const stop = own.observe({
      onResponse: (method, _code, path) => (method === 'POST' && path.includes('tokenreviews') ? reviews.push(path) : undefined),
    });
    const get = async (token: string) => {
      const res = await fetch(`http://127.0.0.1:${operator.port}/metrics`, { headers: { authorization: `Bearer ${token}` } });
      return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as { error: string } };
    };
    try {
      const started = performance.now();
      const answers = await Promise.all(Array.from({ length: 300 }, (_, i) => get(`junk-token-${i}`)));
      const seconds = (performance.now() - started) / 1000;
      // The burst (20) and what the rate (5/s) refilled meanwhile, not 300 reviews.
      expect(reviews.length).toBeLessThanOrEqual(20 + Math.ceil(5 * seconds) + 1);
      expect(answers.filter((a) => a.status === 401)).toHaveLength(reviews.length);
      const limited = answers.filter((a) => a.status === 429);
      expect(limited).toHaveLength(300 - reviews.length);
      expect(limited[0]).toMatchObject({ retryAfter: '5', body: { error: 'rate_limited' } });
      const reviewed = answers.findIndex((a) => a.status === 401);
      const before = reviews.length;
      expect((await get(`junk-token-${reviewed}`)).status).toBe(401);
      expect(reviews.length).toBe(before); // remembered: no second review
    } finally {
      stop();
      await operator.stop();
      own.close();
    }
  });
});
