/**
 * The Helm chart with the real helm: lint, schema, kubeVersion, templates at 1.27 and the newest
 * version applied server-side to the real API server, and the operator run under the chart's RBAC
 * identity (its ServiceAccount), not an admin.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createLogger } from '../../lib/log.ts';
import { loadConfig } from '../../operator/config.ts';
import { createMetrics } from '../../operator/metrics.ts';
import { createMetrics as createWorkerMetrics } from '../../worker/telemetry/metrics.ts';
import { childPath } from '../../operator/children.ts';
import { KubeClient } from '../../operator/kube.ts';
import { poolPath } from '../../operator/reconcile.ts';
import type { VoiceWorkerPool } from '../../operator/types.ts';
import { REPO_ROOT } from '../harness/kube-binaries.ts';
import {
  adminClient,
  createNamespace,
  createSecret,
  ensureCrd,
  eventually,
  getOrUndefined,
  helm,
  kubeconfigFor,
  WITH_REGISTRY,
  kubectl,
  poolSpec,
  runOperator,
} from './helpers.ts';

const CHART = join(REPO_ROOT, 'charts/voice-operator');
/** The newest Kubernetes minor we test against: the API server the harness runs. */
const NEWEST = '1.34.4';
let kube: KubeClient;

beforeAll(async () => {
  kube = await adminClient();
  await ensureCrd(kube);
});
afterAll(() => kube?.close());

function valuesFile(values: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'voice-values-')), 'values.json');
  writeFileSync(file, JSON.stringify(values));
  return file;
}

describe('voice-operator chart', () => {
  it('carries a CRD identical to crds/ (the single source)', () => {
    const name = 'voice.service.io_voiceworkerpools.yaml';
    expect(readFileSync(join(CHART, 'crds', name), 'utf8')).toBe(readFileSync(join(REPO_ROOT, 'crds', name), 'utf8'));
  });

  it('passes helm lint --strict, and its values schema rejects bad values', async () => {
    expect(await helm(['lint', '--strict', CHART, ...WITH_REGISTRY])).toContain('1 chart(s) linted, 0 chart(s) failed');
    await expect(helm(['lint', '--strict', CHART, ...WITH_REGISTRY, '--set', 'replicaCount=0'])).rejects.toThrow(/replicaCount/);
    await expect(helm(['lint', '--strict', CHART, ...WITH_REGISTRY, '--set', 'surprise=1'])).rejects.toThrow(/surprise/);
    await expect(helm(['lint', '--strict', CHART, ...WITH_REGISTRY, '--set', 'pool.enabled=true'])).rejects.toThrow(/backendUrl|required/);
  });

  it('renders the optional ServiceMonitor only when asked', async () => {
    const off = await helm(['template', 'm', CHART, ...WITH_REGISTRY, '--kube-version', NEWEST]);
    expect(off).not.toContain('kind: ServiceMonitor');
    const on = await helm([
      'template',
      'm',
      CHART,
      ...WITH_REGISTRY,
      '--kube-version',
      NEWEST,
      '--set',
      'metrics.serviceMonitor.enabled=true',
    ]);
    expect(on).toMatch(/kind: ServiceMonitor[\s\S]*- port: metrics\n\s+path: \/metrics/);
  });

  it('renders the Grafana dashboard and the PrometheusRule alerts only when asked', async () => {
    const off = await helm(['template', 'm', CHART, ...WITH_REGISTRY, '--kube-version', NEWEST]);
    expect(off).not.toContain('kind: PrometheusRule');
    expect(off).not.toContain('grafana_dashboard');
    const on = await helm([
      'template',
      'm',
      CHART,
      ...WITH_REGISTRY,
      '--kube-version',
      NEWEST,
      '--set',
      'prometheusRule.enabled=true',
      '--set',
      'dashboard.enabled=true',
    ]);
    const docs = on.split(/^---$/m).map(
      (d) =>
        parse(d) as {
          kind?: string;
          metadata?: { labels?: Record<string, string> };
          data?: Record<string, string>;
          spec?: { groups: Array<{ rules: Array<{ alert: string; expr: string }> }> };
        } | null,
    );
    const rule = docs.find((d) => d?.kind === 'PrometheusRule')!;
    const alerts = rule.spec!.groups.flatMap((g) => g.rules);
    expect(alerts.map((a) => a.alert)).toEqual([
      'VoiceSpawnLatencyHigh',
      'VoiceNoCapacity',
      'VoiceOutcomeReportBacklog',
      'VoiceOutcomeReportsDropped',
      'VoiceOperatorReconcileErrors',
      'VoiceOperatorDown',
      'VoiceOperatorNoLeader',
    ]);
    const metricsOf = (text: string) =>
      [
        ...text.matchAll(/\b(worker_[a-z_]+|controller_runtime_[a-z_]+|leader_election_[a-z_]+|workqueue_[a-z_]+|rest_client_[a-z_]+)/g),
      ].map((m) => m[1]!.replace(/_(bucket|sum|count)$/, ''));
    const dashboard = docs.find((d) => d?.kind === 'ConfigMap' && d.metadata?.labels?.grafana_dashboard === '1')!;
    const json = JSON.parse(dashboard.data!['voice-operator.json']!) as { panels: Array<{ targets: Array<{ expr: string }> }> };
    expect(json.panels.length).toBeGreaterThanOrEqual(8);
    // Every series they chart is one the worker or the operator really exports.
    const exported = new Set([
      ...(await createWorkerMetrics({ defaultMetrics: false }).registry.getMetricsAsJSON()).map((m) => m.name),
      ...(await createMetrics().registry.getMetricsAsJSON()).map((m) => m.name),
    ]);
    for (const name of [
      ...alerts.flatMap((a) => metricsOf(a.expr)),
      ...json.panels.flatMap((p) => p.targets.flatMap((t) => metricsOf(t.expr))),
    ])
      expect(exported, name).toContain(name);
  });

  it('ships VoiceWorkerPool viewer and editor ClusterRoles aggregated into view, edit and admin', async () => {
    const docs = (await helm(['template', 'm', CHART, ...WITH_REGISTRY, '--kube-version', NEWEST])).split(/^---$/m).map(
      (d) =>
        parse(d) as {
          kind?: string;
          metadata?: { name: string; labels?: Record<string, string> };
          rules?: Array<{ resources: string[]; verbs: string[] }>;
        } | null,
    );
    const viewer = docs.find((d) => d?.metadata?.name === 'm-voice-operator-voiceworkerpool-viewer')!;
    const editor = docs.find((d) => d?.metadata?.name === 'm-voice-operator-voiceworkerpool-editor')!;
    expect(viewer.metadata!.labels).toMatchObject({ 'rbac.authorization.k8s.io/aggregate-to-view': 'true' });
    expect(viewer.rules![0]!.verbs).toEqual(['get', 'list', 'watch']);
    expect(editor.metadata!.labels).toMatchObject({
      'rbac.authorization.k8s.io/aggregate-to-edit': 'true',
      'rbac.authorization.k8s.io/aggregate-to-admin': 'true',
    });
    expect(editor.rules![0]!.verbs).toEqual(expect.arrayContaining(['create', 'update', 'patch', 'delete']));
    const operatorRole = docs.find((d) => d?.kind === 'ClusterRole' && d.metadata?.name === 'm-voice-operator')!;
    expect(operatorRole.rules!.some((r) => r.resources.includes('secrets'))).toBe(false);
  });

  it('keeps the metrics port cluster-internal, and narrows it to the scrapers with a NetworkPolicy', async () => {
    const parseAll = (text: string) =>
      text
        .split(/^---$/m)
        .map((d) => parse(d) as { kind?: string; spec?: Record<string, unknown> } | null)
        .filter(Boolean);
    const off = parseAll(
      await helm(['template', 'm', CHART, ...WITH_REGISTRY, '--kube-version', NEWEST, '--set', 'metrics.networkPolicy.enabled=false']),
    );
    expect(off.find((d) => d!.kind === 'Service')!.spec).toMatchObject({ type: 'ClusterIP', ports: [{ name: 'metrics' }] });
    expect(off.some((d) => d!.kind === 'NetworkPolicy' || d!.kind === 'Ingress')).toBe(false);
    const on = parseAll(await helm(['template', 'm', CHART, ...WITH_REGISTRY, '--kube-version', NEWEST]));
    const policy = on.find((d) => d!.kind === 'NetworkPolicy')!;
    expect(policy.spec).toMatchObject({
      policyTypes: ['Ingress'],
      ingress: [
        {
          from: [
            { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
            { podSelector: { matchLabels: { 'app.kubernetes.io/name': 'voice-operator-test', 'app.kubernetes.io/instance': 'm' } } },
          ],
          ports: [{ port: 'metrics', protocol: 'TCP' }],
        },
      ],
    });
  });

  it('scrapes the workers on their metrics port with a PodMonitor when asked', async () => {
    expect(await helm(['template', 'm', CHART, ...WITH_REGISTRY, '--kube-version', NEWEST])).not.toContain('kind: PodMonitor');
    const on = (await helm(['template', 'm', CHART, ...WITH_REGISTRY, '--kube-version', NEWEST, '--set', 'workerPodMonitor.enabled=true']))
      .split(/^---$/m)
      .map((d) => parse(d) as { kind?: string; spec?: unknown } | null);
    expect(on.find((d) => d?.kind === 'PodMonitor')!.spec).toMatchObject({
      namespaceSelector: { any: true },
      selector: { matchLabels: { 'app.kubernetes.io/name': 'voice-worker' } },
      podMetricsEndpoints: [{ port: 'metrics', path: '/metrics' }],
    });
  });

  it('refuses clusters older than 1.27', async () => {
    await expect(helm(['template', 'old', CHART, ...WITH_REGISTRY, '--kube-version', '1.26.9'])).rejects.toThrow(
      /kubeVersion|incompatible/i,
    );
  });

  // The oldest supported version, the API server's, and the newest helm knows (its default).
  for (const version of ['1.27.0', NEWEST, 'default']) {
    it(`renders at Kubernetes ${version === 'default' ? "helm's newest (its default)" : version} and the manifests apply server-side`, async () => {
      const ns = await createNamespace(kube, `chart-${version.replace(/\./g, '')}`);
      const release = `r${version.replace(/\./g, '')}`;
      const kubeVersion = version === 'default' ? [] : ['--kube-version', version];
      const values = valuesFile({
        pool: { enabled: true, name: 'from-chart', spec: poolSpec({ autoscaling: { maxReplicas: 5 } }) },
        metrics: { serviceMonitor: { enabled: false } },
      });
      const rendered = await helm([
        'template',
        release,
        CHART,
        ...WITH_REGISTRY,
        '--namespace',
        ns,
        ...kubeVersion,
        '--include-crds',
        '--skip-tests',
        '-f',
        values,
      ]);
      const kinds = [...rendered.matchAll(/^kind: (\w+)$/gm)].map((m) => m[1]);
      // The operator's ClusterRole plus the aggregated viewer and editor roles, and the metrics
      // reviews (its ClusterRole and binding) and the metrics-reader ClusterRole.
      expect(kinds.sort()).toEqual(
        [
          'ClusterRole',
          'ClusterRole',
          'ClusterRole',
          'ClusterRole',
          'ClusterRole',
          'ClusterRoleBinding',
          'ClusterRoleBinding',
          'CustomResourceDefinition',
          'Deployment',
          'NetworkPolicy',
          'PodDisruptionBudget',
          'Role',
          'RoleBinding',
          'Service',
          'ServiceAccount',
          'VoiceWorkerPool',
        ].sort(),
      );
      const out = await kubectl(['apply', '--server-side', '--force-conflicts', '--field-manager=helm-test', '-n', ns, '-f', '-'], {
        input: rendered,
      });
      expect(out).toContain(`deployment.apps/${release}-voice-operator serverside-applied`);
      expect(out).toContain('voiceworkerpool.voice.service.io/from-chart serverside-applied');
      const deployment = await kube.get<{ spec: { replicas: number; template: { spec: { serviceAccountName: string } } } }>(
        childPath('Deployment', ns, `${release}-voice-operator`),
      );
      expect(deployment.spec.replicas).toBe(2);
      expect(deployment.spec.template.spec.serviceAccountName).toBe(`${release}-voice-operator`);
    });
  }

  it('runs the operator as the chart ServiceAccount: enough to reconcile, nothing more', async () => {
    const ns = await createNamespace(kube, 'chart-rbac');
    const release = 'ops';
    const values = valuesFile({
      watchNamespace: ns,
      pool: {
        enabled: true,
        name: 'chart-pool',
        spec: poolSpec({ autoscaling: { maxReplicas: 5 }, ingress: { host: 'chart.example.com', tlsSecretName: 'tls' } }),
      },
    });
    const rendered = await helm([
      'template',
      release,
      CHART,
      ...WITH_REGISTRY,
      '--namespace',
      ns,
      '--kube-version',
      NEWEST,
      '--skip-tests',
      '-f',
      values,
    ]);
    // Only the aggregated VoiceWorkerPool roles and the metrics reviews (tokenreviews and
    // subjectaccessreviews are cluster-scoped) are cluster-wide; the operator's own grants are a Role.
    const clusterRoles = rendered
      .split(/^---$/m)
      .map((d) => parse(d) as { kind?: string; metadata?: { name: string } } | null)
      .filter((d) => d?.kind === 'ClusterRole');
    expect(clusterRoles.map((d) => d!.metadata!.name).sort()).toEqual([
      `${release}-voice-operator-metrics-auth`,
      `${release}-voice-operator-metrics-reader`,
      `${release}-voice-operator-voiceworkerpool-editor`,
      `${release}-voice-operator-voiceworkerpool-viewer`,
    ]);
    await createSecret(kube, ns, 'worker', { token: 't' });
    await kubectl(['apply', '--server-side', '-n', ns, '-f', '-'], { input: rendered });

    const sa = `system:serviceaccount:${ns}:${release}-voice-operator`;
    const kubeconfig = kubeconfigFor(sa, ['system:serviceaccounts', `system:serviceaccounts:${ns}`]);
    const canI = (args: string[]) => kubectl(['auth', 'can-i', ...args], { kubeconfig, anyExitCode: true }).then((o) => o.trim());
    // RBAC caches in the API server pick new bindings up within moments: wait for both of them.
    for (const check of [
      ['patch', 'deployments'],
      ['update', 'leases.coordination.k8s.io'],
      ['watch', 'voiceworkerpools.voice.service.io'],
      ['create', 'events'],
    ]) {
      await eventually(
        () => canI([...check, '-n', ns]),
        (answer) => answer === 'yes',
        `the chart identity may ${check.join(' ')}`,
        10_000,
      );
    }
    expect(await canI(['list', 'secrets', '-n', ns])).toBe('no');
    expect(await canI(['get', 'secrets', '-n', 'default'])).toBe('no');
    // Turning self-hosted speech off deletes the speech server's Deployment, Service and PDB.
    expect(await canI(['delete', 'deployments', '-n', ns])).toBe('yes');
    expect(await canI(['delete', 'pods', '-n', ns])).toBe('no');
    expect(await canI(['create', 'pods', '-n', ns])).toBe('no');

    const restricted = await KubeClient.fromKubeConfig(kubeconfig);
    const warnings: string[] = [];
    const log = createLogger({ name: 'chart-rbac', sink: (line, level) => level !== 'debug' && level !== 'info' && warnings.push(line) });
    const operator = await runOperator(restricted, ns, {}, log);
    try {
      const pool = await eventually(
        () => kube.get<VoiceWorkerPool>(poolPath(ns, 'chart-pool')),
        (p) => p.status?.conditions?.some((c) => c.type === 'Ready') === true,
        'chart-pool status',
      );
      expect(pool.status).toMatchObject({ desiredFloor: 1, endpoint: 'https://chart.example.com/' });
      for (const kind of ['Deployment', 'Service', 'Ingress', 'HorizontalPodAutoscaler', 'PodDisruptionBudget'] as const) {
        expect(await getOrUndefined(kube, childPath(kind, ns, 'chart-pool')), kind).toBeDefined();
      }
      // Turning autoscaling off deletes the HPA: the Role allows exactly that.
      await kube.mergePatch(poolPath(ns, 'chart-pool'), { spec: { autoscaling: { enabled: false } } });
      await eventually(
        () => getOrUndefined(kube, childPath('HorizontalPodAutoscaler', ns, 'chart-pool')),
        (h) => h === undefined,
        'HPA deleted by the restricted identity',
      );
      // A missing Secret: reading it (get) and recording an Event are allowed too.
      await kube.mergePatch(poolPath(ns, 'chart-pool'), { spec: { secrets: { workerToken: { name: 'absent' } } } });
      await eventually(
        () => kube.get<{ items: Array<{ reason: string }> }>(`/api/v1/namespaces/${ns}/events`),
        (l) => l.items.some((e) => e.reason === 'SecretNotFound'),
        'an Event written by the restricted identity',
      );
      // A whole 403, not the digits inside a random name (the namespace "chart-rbac-84e403" once matched).
      expect(
        warnings.filter((w) => /forbidden|\b403\b/i.test(w)),
        warnings.join('\n'),
      ).toEqual([]);
    } finally {
      await operator.stop();
      restricted.close();
    }
  });

  it('watching every namespace with the defaults: reads Secrets only where secretNamespaces allows, asks nowhere else, and goes quiet', async () => {
    const ns = await createNamespace(kube, 'chart-cluster');
    const pools = await createNamespace(kube, 'chart-pools');
    const release = 'wide';
    const render = (extra: Record<string, unknown> = {}) =>
      helm([
        'template',
        release,
        CHART,
        ...WITH_REGISTRY,
        '--namespace',
        ns,
        '--kube-version',
        NEWEST,
        '--skip-tests',
        '-f',
        valuesFile({ secretNamespaces: [pools], ...extra }),
      ]);
    const rendered = await render();
    await kubectl(['apply', '--server-side', '-f', '-'], { input: rendered }); // every object names its namespace
    const sa = `system:serviceaccount:${ns}:${release}-voice-operator`;
    const kubeconfig = kubeconfigFor(sa, ['system:serviceaccounts', `system:serviceaccounts:${ns}`]);
    const canI = (args: string[]) => kubectl(['auth', 'can-i', ...args], { kubeconfig, anyExitCode: true }).then((o) => o.trim());
    await eventually(
      () => canI(['get', 'secrets', '-n', pools]),
      (a) => a === 'yes',
      'Secret reads in secretNamespaces',
      10_000,
    );
    expect(await canI(['get', 'secrets', '-n', ns])).toBe('no');
    expect(await canI(['get', 'secrets', '-n', 'kube-system'])).toBe('no');
    expect(await canI(['patch', 'deployments', '-n', 'default'])).toBe('yes');
    expect(await canI(['create', 'networkpolicies.networking.k8s.io', '-n', 'default'])).toBe('yes');
    // The pools' pods, to say why they do not run: listed and watched, nothing more.
    expect(await canI(['watch', 'pods', '-n', 'default'])).toBe('yes');
    expect(await canI(['get', 'pods/log', '-n', 'default'])).toBe('no');
    expect(await canI(['delete', 'pods', '-n', 'default'])).toBe('no');

    // The operator configured as the chart's Deployment configures it.
    const fromChart = (text: string) => {
      const deployment = text
        .split(/^---$/m)
        .map(
          (d) =>
            parse(d) as {
              kind?: string;
              spec?: { template: { spec: { containers: Array<{ env: Array<{ name: string; value?: string }> }> } } };
            } | null,
        )
        .find((d) => d?.kind === 'Deployment')!;
      const c = loadConfig(
        Object.fromEntries(
          deployment.spec!.template.spec.containers[0]!.env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value]),
        ),
      );
      return { readPodStatus: c.readPodStatus, build: c.build, ...(c.secretNamespaces ? { secretNamespaces: c.secretNamespaces } : {}) };
    };
    const defaults = fromChart(rendered);
    expect(defaults).toMatchObject({
      secretNamespaces: [pools],
      readPodStatus: true,
      build: { runAsUser: 1000, networkPolicy: { metricsNamespaces: ['monitoring'] } },
    });

    // A pool where the operator may not read Secrets: reconciled, its Secrets simply not checked.
    const elsewhere = await createNamespace(kube, 'chart-noread');
    await createSecret(kube, elsewhere, 'worker', { token: 't' });
    await kube.request('POST', poolPath(elsewhere), {
      body: { apiVersion: 'voice.service.io/v1beta1', kind: 'VoiceWorkerPool', metadata: { name: 'unread' }, spec: poolSpec() },
    });
    const restricted = await KubeClient.fromKubeConfig(kubeconfig);
    // Its ClusterRole, used in one namespace so that it leaves the other tests' pools alone.
    let operator = await runOperator(restricted, elsewhere, { leaseNamespace: ns, leaseName: 'wide-leader', ...defaults });
    const forbidden = async (o: typeof operator) =>
      (await o.metrics.restRequests.get()).values.filter((x) => x.labels.code === '403').reduce((a, x) => a + x.value, 0);
    try {
      const pool = await eventually(
        () => kube.get<VoiceWorkerPool>(poolPath(elsewhere, 'unread')),
        (p) => p.status?.conditions?.some((c) => c.type === 'Degraded') === true,
        'unread status',
      );
      expect(pool.status?.conditions?.find((c) => c.type === 'Degraded')?.status).toBe('False');
      expect(await getOrUndefined(kube, childPath('Deployment', elsewhere, 'unread'))).toBeDefined();
      expect(await getOrUndefined(kube, childPath('NetworkPolicy', elsewhere, 'unread'))).toBeDefined();
      // Quiet: no pass every BLOCKED_RETRY_SECONDS (1 s here) for Secrets it may not read, and not one 403.
      let last = -1;
      await eventually(
        async () => {
          const n = operator.reconciles();
          const quiet = n === last;
          last = n;
          await new Promise((r) => setTimeout(r, 2500));
          return quiet;
        },
        (quiet) => quiet,
        'the operator quiet',
        30_000,
      );
      expect(await forbidden(operator)).toBe(0);
    } finally {
      await operator.stop();
    }

    // Without workerPods.readPodStatus it may not read pods, and does not ask.
    const withoutPods = await render({ workerPods: { readPodStatus: false } });
    await kubectl(['apply', '--server-side', '-f', '-'], { input: withoutPods });
    await eventually(
      () => canI(['list', 'pods', '-n', elsewhere]),
      (a) => a === 'no',
      'no pods list without readPodStatus',
      10_000,
    );
    operator = await runOperator(restricted, elsewhere, { leaseNamespace: ns, leaseName: 'wide-leader', ...fromChart(withoutPods) });
    try {
      await kube.mergePatch(poolPath(elsewhere, 'unread'), { spec: { maxSessionSeconds: 900 } });
      await eventually(
        () => kube.get<VoiceWorkerPool>(poolPath(elsewhere, 'unread')),
        (p) => p.status?.observedGeneration === 2,
        'unread generation 2 without pod reads',
      );
      expect(await forbidden(operator)).toBe(0);
    } finally {
      await operator.stop();
    }

    // With it (the default) it names a missing Secret from the pod that cannot start.
    await kubectl(['apply', '--server-side', '-f', '-'], { input: rendered });
    await eventually(
      () => canI(['list', 'pods', '-n', elsewhere]),
      (a) => a === 'yes',
      'pods list with readPodStatus',
      10_000,
    );
    operator = await runOperator(restricted, elsewhere, { leaseNamespace: ns, leaseName: 'wide-leader', ...defaults });
    try {
      await kube.request('POST', poolPath(elsewhere), {
        body: {
          apiVersion: 'voice.service.io/v1beta1',
          kind: 'VoiceWorkerPool',
          metadata: { name: 'lacking' },
          spec: poolSpec({ secrets: { workerToken: { name: 'nowhere' } } }),
        },
      });
      await eventually(
        () => getOrUndefined(kube, childPath('Deployment', elsewhere, 'lacking')),
        (d) => d !== undefined,
        'lacking applied (its Secrets unchecked)',
      );
      await kube.request('POST', `/api/v1/namespaces/${elsewhere}/serviceaccounts`, {
        body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } },
      });
      await kube.request('POST', `/api/v1/namespaces/${elsewhere}/pods`, {
        body: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'lacking-7d9f-x1', labels: { 'voice.service.io/pool': 'lacking' } },
          spec: { automountServiceAccountToken: false, containers: [{ name: 'worker', image: 'voice-worker:v1.3.0' }] },
        },
      });
      // No kubelet here: report what it would.
      await kube.mergePatch(`/api/v1/namespaces/${elsewhere}/pods/lacking-7d9f-x1/status`, {
        status: {
          phase: 'Pending',
          containerStatuses: [
            {
              name: 'worker',
              image: 'voice-worker:v1.3.0',
              imageID: '',
              ready: false,
              restartCount: 0,
              state: { waiting: { reason: 'CreateContainerConfigError', message: 'secret "nowhere" not found' } },
            },
          ],
        },
      });
      const lacking = await eventually(
        () => kube.get<VoiceWorkerPool>(poolPath(elsewhere, 'lacking')),
        (p) => p.status?.conditions?.find((c) => c.type === 'Degraded')?.status === 'True',
        'lacking Degraded from the pod status',
      );
      expect(lacking.status?.conditions?.find((c) => c.type === 'Degraded')).toMatchObject({
        reason: 'SecretNotFound',
        message: expect.stringContaining(`Secret ${elsewhere}/nowhere does not exist: pod lacking-7d9f-x1`),
      });
      expect(await forbidden(operator)).toBe(0);
    } finally {
      await operator.stop();
      restricted.close();
    }
  });
});
