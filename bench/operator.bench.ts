/**
 * The operator on a real API server (etcd + kube-apiserver started here, as in the tests):
 * - latency from creating a pool to all its children existing (p50/p99 over pools created one by one),
 *   beside a peer: the same five children applied directly with server-side apply (the API floor);
 * - time for 100 pools created at once to converge (children exist and status observed);
 * - the operator process's memory (RSS) with 100 pools;
 * - API calls per reconcile: without informer caches (a GET per read, as before issue 11) and with them;
 * - reconciles per minute of the idle fleet (nothing changes; only resyncs and window edges may run);
 * - how long a standby takes to lead after the leader's API calls hang (production lease timings).
 * The creation latency and the burst run twice, side by side: the operator as it is configured by
 * default, and with the setting that the regression of issue 23 came from (docs/operator.md,
 * "Client-side rate limit"): a token bucket of 50 requests per second, burst 100. BENCH_COMPARE=0
 * runs the default only.
 * Aims: p50 under 1 s, 100 pools under 30 s, an idle fleet under 1 reconcile per pool per minute.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { childPath, CHILD_RESOURCES } from '../operator/children.ts';
import { silentLogger } from '../lib/log.ts';
import type { OperatorConfig } from '../operator/config.ts';
import { startOperator } from '../operator/controller.ts';
import { KubeClient } from '../operator/kube.ts';
import { poolPath, reconcile } from '../operator/reconcile.ts';
import { startApiProxy } from '../test/operator/api-proxy.ts';
import type { ChildKind } from '../operator/resources/index.ts';
import { desiredState } from '../operator/resources/index.ts';
import { FIELD_MANAGER, MANAGED_BY, type VoiceWorkerPool } from '../operator/types.ts';
import { Informer } from '../operator/watch.ts';
import { kubeBinary, REPO_ROOT } from '../test/harness/kube-binaries.ts';
import { startKubeApiServer } from '../test/harness/kube-apiserver.ts';
import { freePort, waitFor } from '../test/harness/ports.ts';
import { machineLine, ms, percentile, printTable, rssMiB } from './support.ts';

const SEQUENTIAL = Number(process.env.BENCH_POOLS_SEQUENTIAL ?? 40);
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 30);

/** An in-process operator replica with the production lease timings (and, like it, no client-side rate limit). */
const benchConfig = (namespace: string): OperatorConfig => ({
  watchNamespace: namespace,
  leaseNamespace: namespace,
  leaseName: 'bench-leader',
  identity: `bench-${Math.random().toString(36).slice(2, 8)}`,
  metricsHost: '127.0.0.1',
  metricsPort: 0,
  resyncMs: 300_000,
  workers: 4,
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2000,
  blockedRetryMs: 30_000,
  readPodStatus: true,
  build: { runAsUser: 1000 },
  shutdownTimeoutMs: 20_000,
});
const BURST = Number(process.env.BENCH_POOLS_BURST ?? 100);
/** The operator's environment in each side-by-side run: its defaults, and the limit it had before. */
const VARIANTS: ReadonlyArray<{ label: string; env: Record<string, string> }> = [
  ...(process.env.BENCH_COMPARE === '0'
    ? []
    : [{ label: 'before: KUBE_API_QPS=50 KUBE_API_BURST=100', env: { KUBE_API_QPS: '50', KUBE_API_BURST: '100' } }]),
  { label: 'today: defaults', env: {} },
];
const KINDS: ChildKind[] = ['Deployment', 'Service', 'Ingress', 'HorizontalPodAutoscaler', 'PodDisruptionBudget'];

const spec = {
  image: { repository: 'registry.example.com/voice-worker' },
  secrets: { workerToken: { name: 'worker' }, openaiApiKey: { name: 'worker', key: 'token' } },
  roomProvider: 'livekit',
  livekit: { url: 'wss://livekit.example.com', secretName: 'worker', apiKeyKey: 'token', apiSecretKey: 'token' },
  redis: { url: 'redis://redis:6379' },
  backendUrl: 'https://app.service.example',
  autoscaling: { maxReplicas: 20 },
  sizing: { p95ConcurrentSessions: 10 },
  ingress: { host: 'voice.example.com', tlsSecretName: 'tls' },
};

/** A namespace with the Secret the pools name. */
async function createNamespace(kube: KubeClient, name: string): Promise<void> {
  await kube.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  await kube.request('POST', `/api/v1/namespaces/${name}/secrets`, {
    body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'worker' }, data: { token: Buffer.from('t').toString('base64') } },
  });
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

interface CreationRun {
  ns: string;
  /** Pool created -> its five children exist, one pool at a time. */
  latencies: number[];
  /** The burst, from its first create: all created, all children exist, converged (status too). */
  created: number;
  childrenDone: number;
  converged: number;
  burstKeys: string[];
  operator: ChildProcess;
  metricsPort: number;
  /** The operator's API requests (watches aside) and reconciles per pool created, until converged. */
  requestsPerPool: number;
  reconcilesPerPool: number;
}

/**
 * Measures 1 and 2 in a namespace of their own, with an operator process (as it runs in a cluster)
 * that watches only that namespace and has `env` on top of its defaults; the operator keeps running.
 */
async function creationRun(
  kube: KubeClient,
  kubeconfig: string,
  ns: string,
  env: Record<string, string>,
  started: { watchers: Informer[]; processes: ChildProcess[] },
): Promise<CreationRun> {
  await createNamespace(kube, ns);
  // When each child of each pool was first seen, by a watch (the bench's own informers).
  const seen = new Map<string, Map<ChildKind, number>>();
  const mine: Informer[] = [];
  for (const kind of KINDS) {
    const informer = new Informer({
      kube,
      resource: kind,
      path: `${childPath(kind, ns).replace(/\/[^/]+$/, '')}/${CHILD_RESOURCES[kind].plural}`,
      labelSelector: `app.kubernetes.io/managed-by=${MANAGED_BY}`,
      onEvent: (type, o) => {
        if (type !== 'ADDED') return;
        const key = `${o.metadata.namespace}/${o.metadata.name}`;
        const m = seen.get(key) ?? new Map<ChildKind, number>();
        if (!m.has(kind)) m.set(kind, performance.now());
        seen.set(key, m);
      },
    });
    informer.start();
    mine.push(informer);
    started.watchers.push(informer);
  }
  await waitFor(() => mine.every((w) => w.synced), { timeoutMs: 10_000, what: 'bench informers' });
  const allChildren = (key: string) => (seen.get(key)?.size ?? 0) === KINDS.length;

  const metricsPort = await freePort();
  const operator = spawn(process.execPath, ['operator/main.ts'], {
    cwd: REPO_ROOT,
    // The bench reads /metrics itself: no token review on it here.
    env: {
      ...process.env,
      KUBECONFIG: kubeconfig,
      POD_NAMESPACE: ns,
      WATCH_NAMESPACE: ns,
      LOG_LEVEL: 'warn',
      METRICS_HOST: '127.0.0.1',
      METRICS_PORT: String(metricsPort),
      METRICS_AUTH: 'none',
      LEASE_DURATION_SECONDS: '15',
      ...env,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  started.processes.push(operator);
  await waitFor(
    async () =>
      (await fetch(`http://127.0.0.1:${metricsPort}/readyz`)).ok &&
      (await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text())).includes(
        'leader_election_master_status{name="voice-operator-leader"} 1',
      ),
    { timeoutMs: 30_000, what: 'operator leading' },
  );

  const counters = async (): Promise<{ requests: number; reconciles: number }> => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const sum = (name: string) => [...text.matchAll(new RegExp(`^${name}\\{[^}]*\\} (\\d+)`, 'gm'))].reduce((n, m) => n + Number(m[1]), 0);
    return { requests: sum('rest_client_requests_total'), reconciles: sum('controller_runtime_reconcile_total') };
  };
  const before = await counters();

  // 1. One pool at a time: create -> all five children exist.
  const latencies: number[] = [];
  for (let i = 0; i < SEQUENTIAL; i++) {
    const key = `${ns}/seq-${i}`;
    const t0 = performance.now();
    await kube.request('POST', poolPath(ns), {
      body: { apiVersion: 'voice.service.io/v1beta1', kind: 'VoiceWorkerPool', metadata: { name: `seq-${i}` }, spec },
    });
    await waitFor(() => allChildren(key), { timeoutMs: 30_000, intervalMs: 2, what: `children of ${key}` });
    latencies.push(Math.max(...seen.get(key)!.values()) - t0);
  }

  // 2. A burst of pools created at once (8 clients in parallel): until every pool converged.
  const burstKeys = Array.from({ length: BURST }, (_, i) => `burst-${i}`);
  const t0 = performance.now();
  const queue = [...burstKeys];
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let name = queue.shift(); name; name = queue.shift()) {
        await kube.request('POST', poolPath(ns), {
          body: { apiVersion: 'voice.service.io/v1beta1', kind: 'VoiceWorkerPool', metadata: { name }, spec },
        });
      }
    }),
  );
  const created = performance.now() - t0;
  await waitFor(() => burstKeys.every((k) => allChildren(`${ns}/${k}`)), { timeoutMs: 120_000, intervalMs: 20, what: 'burst children' });
  const childrenDone = performance.now() - t0;
  await waitFor(
    async () => {
      const list = await kube.get<{ items: VoiceWorkerPool[] }>(poolPath(ns));
      return list.items
        .filter((p) => p.metadata.name.startsWith('burst-'))
        .every((p) => p.status?.observedGeneration === p.metadata.generation && p.status?.desiredFloor === 12);
    },
    { timeoutMs: 120_000, intervalMs: 200, what: 'burst status' },
  );
  const converged = performance.now() - t0;
  const after = await counters();
  const perPool = (n: number) => n / (SEQUENTIAL + BURST);
  return {
    ns,
    latencies,
    created,
    childrenDone,
    converged,
    burstKeys,
    operator,
    metricsPort,
    requestsPerPool: perPool(after.requests - before.requests),
    reconcilesPerPool: perPool(after.reconciles - before.reconciles),
  };
}

async function main(): Promise<void> {
  console.log(machineLine());
  const server = await startKubeApiServer();
  const kube = await KubeClient.fromKubeConfig(server.adminKubeconfig);
  const started = { watchers: [] as Informer[], processes: [] as ChildProcess[] };
  try {
    execFileSync(kubeBinary('kubectl'), ['--kubeconfig', server.adminKubeconfig, 'apply', '--server-side', '-f', join(REPO_ROOT, 'crds')], {
      stdio: 'pipe',
    });
    await waitFor(
      async () => (await kube.get<{ resources: Array<{ name: string }> }>('/apis/voice.service.io/v1beta1')).resources.length > 0,
      { timeoutMs: 30_000, what: 'CRD served' },
    );
    const peerNs = 'bench-peer';
    await createNamespace(kube, peerNs);

    // 1 and 2 for each variant, one after the other (never at once: they would share the two cores).
    // The defaults run last, on an API server already holding the other run's objects, and stay up
    // for the measures that follow.
    const runs: CreationRun[] = [];
    for (const [i, variant] of VARIANTS.entries()) {
      const last = i === VARIANTS.length - 1;
      const run = await creationRun(kube, server.adminKubeconfig, last ? 'bench' : `bench-${i}`, variant.env, started);
      runs.push(run);
      if (!last) {
        await stopProcess(run.operator);
        // The test API server's Service range has 254 addresses: give this run's back (no namespace
        // controller runs here to do it).
        const services = await kube.get<{ items: Array<{ metadata: { name: string } }> }>(`/api/v1/namespaces/${run.ns}/services`);
        for (const svc of services.items) await kube.request('DELETE', `/api/v1/namespaces/${run.ns}/services/${svc.metadata.name}`);
      }
    }
    const today = runs.at(-1)!;
    const { ns, latencies, converged, burstKeys, metricsPort } = today;

    // Peer: the same children applied directly (what any client pays for five server-side applies).
    const template = await kube.get<VoiceWorkerPool>(poolPath(ns, 'seq-0'));
    const peer: number[] = [];
    for (let i = 0; i < SEQUENTIAL; i++) {
      const p: VoiceWorkerPool = { ...template, metadata: { ...template.metadata, name: `peer-${i}`, namespace: peerNs } };
      const t0 = performance.now();
      for (const child of desiredState(p, new Date()).apply)
        await kube.apply(childPath(child.kind as ChildKind, peerNs, child.metadata.name), child, FIELD_MANAGER);
      peer.push(performance.now() - t0);
    }

    // 3. Memory of the operator process holding every pool (SEQUENTIAL + BURST).
    const rss = rssMiB(today.operator.pid!);
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const reconciles = [...metrics.matchAll(/^controller_runtime_reconcile_total\{[^}]*\} (\d+)/gm)].reduce((s, m) => s + Number(m[1]), 0);

    // 4. The idle fleet: reconciles over a quiet window, per minute.
    const reconcileCount = async () =>
      [
        ...(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()).matchAll(
          /^controller_runtime_reconcile_total\{[^}]*\} (\d+)/gm,
        ),
      ].reduce((s, m) => s + Number(m[1]), 0);
    // First the tail of the burst drains (child events queue more passes): quiet for 3 s.
    let last = -1;
    await waitFor(
      async () => {
        const n = await reconcileCount();
        const quiet = n === last;
        last = n;
        return quiet;
      },
      { timeoutMs: 180_000, intervalMs: 3000, what: 'the fleet to go quiet' },
    );
    const idleStart = await reconcileCount();
    await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
    const idlePerMinute = ((await reconcileCount()) - idleStart) * (60 / IDLE_SECONDS);
    const pools = SEQUENTIAL + BURST;

    // 5. API calls per reconcile, without and with the caches (the same pools, each reconciled once).
    const counted = await KubeClient.fromKubeConfig(server.adminKubeconfig);
    let calls = 0;
    counted.observe({ onResponse: () => calls++ });
    const keys = burstKeys.slice(0, 20).map((n) => `${ns}/${n}`);
    for (const key of keys) await reconcile({ kube: counted, log: silentLogger, now: () => new Date(), blockedRetryMs: 30_000 }, key);
    const withoutCache = calls / keys.length;
    const cached = await startOperator({ config: { ...benchConfig(ns), leaseName: 'bench-cache' }, kube: counted, log: silentLogger });
    await waitFor(() => cached.isLeader() && cached.reconciles() >= pools, { timeoutMs: 120_000, what: 'cached operator synced' });
    await waitFor(
      async () => {
        const n = cached.reconciles();
        await new Promise((r) => setTimeout(r, 500));
        return cached.reconciles() === n;
      },
      { timeoutMs: 60_000, what: 'cached operator quiet' },
    );
    const [c0, r0] = [calls, cached.reconciles()];
    for (const key of keys) await kube.mergePatch(poolPath(ns, key.split('/')[1]!), { spec: { maxSessionSeconds: 900 } });
    await waitFor(() => cached.reconciles() - r0 >= keys.length, { timeoutMs: 60_000, what: 'cached reconciles' });
    await new Promise((r) => setTimeout(r, 500));
    const withCache = (calls - c0) / (cached.reconciles() - r0);
    await cached.stop();
    counted.close();

    // 6. Takeover: the leader's API calls hang (a proxy stops forwarding); time until the standby leads.
    const takeoverNs = 'bench-takeover';
    await kube.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: takeoverNs } } });
    const proxy = await startApiProxy(server.adminKubeconfig);
    const behind = await KubeClient.fromKubeConfig(proxy.kubeconfig);
    const hung = await startOperator({ config: benchConfig(takeoverNs), kube: behind, log: silentLogger });
    await waitFor(() => hung.isLeader(), { timeoutMs: 30_000, what: 'proxied leader' });
    const standby = await startOperator({ config: benchConfig(takeoverNs), kube, log: silentLogger });
    await new Promise((r) => setTimeout(r, 1000));
    proxy.partition();
    const cut = performance.now();
    await waitFor(() => standby.isLeader(), { timeoutMs: 60_000, intervalMs: 20, what: 'standby leads' });
    const takeover = performance.now() - cut;
    await standby.stop();
    proxy.heal();
    await hung.stop();
    behind.close();
    await proxy.close();

    console.log();
    // Side by side: the same measures with each variant's operator (run one after the other).
    const side = (f: (r: CreationRun) => string): string[] => runs.map(f);
    console.log(
      'Side by side, one run after the other on this machine (its load from other runs varies: compare the columns of this table only):',
    );
    printTable(
      ['measure', ...VARIANTS.map((v) => v.label), 'aim'],
      [
        [
          `pool created -> 5 children exist, p50 (${SEQUENTIAL} pools, one at a time)`,
          ...side((r) => ms(percentile(r.latencies, 50))),
          '< 1 s',
        ],
        ['pool created -> 5 children exist, p99', ...side((r) => ms(percentile(r.latencies, 99))), ''],
        [`${BURST} pools at once: all created (client side)`, ...side((r) => ms(r.created)), ''],
        [`${BURST} pools at once: all children exist`, ...side((r) => ms(r.childrenDone)), ''],
        [`${BURST} pools at once: converged (children + status)`, ...side((r) => ms(r.converged)), '< 30 s'],
        ['operator API requests per pool created (until converged)', ...side((r) => r.requestsPerPool.toFixed(1)), ''],
        ['reconciles per pool created (until converged)', ...side((r) => r.reconcilesPerPool.toFixed(1)), ''],
      ],
      ['left', ...VARIANTS.map(() => 'left' as const), 'left'],
    );
    console.log();
    printTable(
      ['measure', 'value', 'aim'],
      [
        [`pool created -> 5 children exist, p50 (${SEQUENTIAL} pools, one at a time)`, ms(percentile(latencies, 50)), '< 1 s'],
        ['peer: the 5 children applied directly, p50 / p99', `${ms(percentile(peer, 50))} / ${ms(percentile(peer, 99))}`, '(API floor)'],
        [`${BURST} pools at once: converged (children + status)`, ms(converged), '< 30 s'],
        [`operator RSS with ${SEQUENTIAL + BURST} pools`, `${rss.toFixed(0)} MiB`, ''],
        ['reconciles done by the operator', reconciles, ''],
        [`idle fleet of ${pools} pools: reconciles per minute`, idlePerMinute.toFixed(1), `< ${pools}`],
        ['API calls per reconcile without caches (GET per read, before)', withoutCache.toFixed(1), ''],
        ['API calls per reconcile with informer caches (after)', withCache.toFixed(1), ''],
        ['standby leads after the leader hangs (lease 15 s, renew 10 s, retry 2 s)', ms(takeover), '<= lease + retry'],
      ],
      ['left', 'left', 'left'],
    );
  } finally {
    for (const w of started.watchers) await w.stop();
    for (const p of started.processes) await stopProcess(p);
    kube.close();
    await server.stop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
