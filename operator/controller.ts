/**
 * Wires the parts together for one operator replica: leader election, and while leading the
 * informers on pools and their children, the work queue and the reconcile workers of the
 * controller runtime (runtime/), and a periodic resync. main.ts, the tests and the benchmark all
 * start the operator through here; the pool's logic is in reconcile.ts.
 */
import type { Logger } from '../lib/log.ts';
import { CHILD_RESOURCES, controllingPool } from './children.ts';
import type { OperatorConfig } from './config.ts';
import { clampDelay } from './delay.ts';
import { resourcePath, type KubeClient } from './kube.ts';
import { LeaderElector } from './leader.ts';
import { poolPodInformer } from './pod-informer.ts';
import { trimChild, trimPool } from './cache-transform.ts';
import { markFailed } from './failure.ts';
import { CONTROLLER, createMetrics, type Metrics } from './metrics.ts';
import { reconcile, type ReconcileDeps } from './reconcile.ts';
import type { ChildKind } from './resources/index.ts';
import { childFingerprint } from './children.ts';
import { kubernetesMetricsAuthorizer } from './metrics-auth.ts';
import { DEFAULT_RECONCILE_TIMEOUT_MS, runWorkers } from './runtime/controller.ts';
import { fingerprintChanged, generationChanged } from './runtime/predicates.ts';
import { WorkQueue } from './runtime/queue.ts';
import { startProbeServer } from './server.ts';
import { GROUP, MANAGED_BY, PLURAL, VERSION, type KubeObject, type VoiceWorkerPool } from './types.ts';
import { Informer, type KubeItem } from './watch.ts';

export interface RunningOperator {
  port: number;
  identity: string;
  metrics: Metrics;
  isLeader(): boolean;
  /** Keys reconciled so far (successfully or not); tests and the benchmark read it. */
  reconciles(): number;
  stop(): Promise<void>;
}

export interface StartOptions {
  config: Readonly<OperatorConfig>;
  kube: KubeClient;
  log: Logger;
  now?: () => Date;
  /** Watch timeout per request (seconds); tests shorten it to exercise resumption. */
  watchTimeoutSeconds?: number;
}

const collection = (ns: string | undefined, r: { group: string; version: string; plural: string }) =>
  resourcePath({ ...r, ...(ns ? { namespace: ns } : {}) });

export async function startOperator(o: StartOptions): Promise<RunningOperator> {
  const { config, kube, log } = o;
  const metrics = createMetrics();
  const leaseLabel = { name: config.leaseName };
  metrics.leaderStatus.set(leaseLabel, 0);
  const host = kube.server.host;
  const unobserve = kube.observe({
    onResponse: (method, code) => metrics.restRequests.inc({ code: code === 0 ? '<error>' : String(code), method, host }),
    onWarning: (warning, method, path) => log.warn('the API server warned', { warning, method, path }),
  });
  let reconcileCount = 0;
  let session: { stop(): Promise<void>; synced(): boolean } | undefined;
  /** The stop of the last session that lost the lease, so a shutdown can wait for it. */
  let ending: Promise<void> = Promise.resolve();

  const elector = new LeaderElector({
    kube,
    namespace: config.leaseNamespace,
    name: config.leaseName,
    identity: config.identity,
    leaseDurationMs: config.leaseDurationMs,
    renewDeadlineMs: config.renewDeadlineMs,
    retryPeriodMs: config.retryPeriodMs,
    log,
    onStartedLeading: () => {
      metrics.leaderStatus.set(leaseLabel, 1);
      session = startLeading();
    },
    // Stops the watches and the workers and aborts their in-flight API calls (the partitioned
    // leader must write nothing after its deadline); the elector releases the lease only after.
    onStoppedLeading: () => {
      metrics.leaderStatus.set(leaseLabel, 0);
      const s = session;
      session = undefined;
      if (s) ending = ending.then(() => s.stop());
      return ending;
    },
  });

  function startLeading() {
    const name = CONTROLLER;
    const queue = new WorkQueue({
      observer: {
        added: () => metrics.queueAdds.inc({ name }),
        retried: () => metrics.retries.inc({ name }),
        waited: (seconds) => metrics.queueLatency.observe({ name }, seconds),
      },
    });
    // Every API call of this leadership term goes through a client that is cut off when it ends.
    const term = new AbortController();
    const scoped = kube.scoped(term.signal);
    const lifecycle = (resource: string) => (event: string, detail?: string) => {
      metrics.watchEvents.inc({ resource, event });
      if (event === 'error') log.warn('watch failed; retrying with backoff', { resource, detail });
      else log.debug(`watch ${event}`, { resource, detail });
    };
    const watchTimeout = o.watchTimeoutSeconds ? { watchTimeoutSeconds: o.watchTimeoutSeconds } : {};
    // Our own status writes change no generation: skipping them avoids a reconcile per write.
    const specChanged = generationChanged<KubeItem>();
    const pools = new Informer({
      kube: scoped,
      resource: PLURAL,
      path: collection(config.watchNamespace, { group: GROUP, version: VERSION, plural: PLURAL }),
      transform: trimPool,
      ...watchTimeout,
      onLifecycle: lifecycle(PLURAL),
      onEvent: (type, pool) => {
        const key = `${pool.metadata.namespace}/${pool.metadata.name}`;
        if (specChanged(type, key, pool)) queue.add(key);
      },
    });
    const kinds = Object.keys(CHILD_RESOURCES) as ChildKind[];
    const children = new Map(
      kinds.map((kind) => {
        // A change only of status (an HPA's metrics) is ignored.
        const changed = fingerprintChanged((child: KubeItem) => childFingerprint(kind, child));
        const informer = new Informer({
          kube: scoped,
          resource: CHILD_RESOURCES[kind].plural,
          path: collection(config.watchNamespace, CHILD_RESOURCES[kind]),
          labelSelector: `app.kubernetes.io/managed-by=${MANAGED_BY}`,
          transform: trimChild,
          ...watchTimeout,
          onLifecycle: lifecycle(CHILD_RESOURCES[kind].plural),
          onEvent: (type, child) => {
            if (!changed(type, `${child.metadata.namespace ?? ''}/${child.metadata.name}`, child)) return;
            const owner = controllingPool(child as Parameters<typeof controllingPool>[0]);
            if (owner) queue.add(owner);
          },
        });
        return [kind, informer] as const;
      }),
    );
    // The pools' pods, to say why they do not run (only with READ_POD_STATUS: it needs pods list and watch).
    const pods = config.readPodStatus
      ? poolPodInformer({
          kube: scoped,
          namespace: config.watchNamespace,
          onLifecycle: lifecycle('pods'),
          enqueue: (key) => queue.add(key),
          ...(o.watchTimeoutSeconds ? { watchTimeoutSeconds: o.watchTimeoutSeconds } : {}),
        })
      : undefined;
    const informers = [pools, ...children.values()];
    const deps: ReconcileDeps = {
      kube: scoped,
      log,
      now: o.now ?? (() => new Date()),
      blockedRetryMs: config.blockedRetryMs,
      sentEvents: new Map(),
      buildOptions: config.build,
      readPodStatus: config.readPodStatus,
      ...(config.secretNamespaces ? { secretNamespaces: config.secretNamespaces } : {}),
      cache: {
        pool: (ns, n) => pools.get(`${ns}/${n}`) as unknown as VoiceWorkerPool | undefined,
        child: (kind, ns, n) => children.get(kind)?.get(`${ns}/${n}`) as unknown as KubeObject | undefined,
        ...(pods ? { pods: pods.pods } : {}),
      },
    };
    for (const informer of informers) informer.start();
    pods?.informer.start(); // not waited for: a pod not seen yet only means no problem known yet

    const resync = setInterval(() => {
      for (const pool of pools.items()) queue.add(`${pool.metadata.namespace}/${pool.metadata.name}`);
    }, clampDelay(config.resyncMs));
    resync.unref();

    const timeoutMs = config.reconcileTimeoutMs ?? DEFAULT_RECONCILE_TIMEOUT_MS;
    const workers = runWorkers({
      name,
      queue,
      workers: config.workers,
      timeoutMs,
      metrics,
      log,
      stopped: term.signal,
      // No reconcile before every cache holds a full list: until then a miss would read as "absent"
      // (a child to create or hand the floor to again, a pool deleted). controller-runtime waits too.
      synced: Promise.all(informers.map((i) => i.whenSynced)),
      // Each pass's API calls end at its deadline (or the term's end), and so do those that mark a failed pool.
      reconcile: (key, signal) => reconcile({ ...deps, kube: kube.scoped(signal) }, key),
      onFailure: (key, failure) =>
        markFailed({ ...deps, kube: kube.scoped(AbortSignal.any([term.signal, AbortSignal.timeout(timeoutMs)])) }, key, failure),
      onReconciled: () => reconcileCount++,
    });
    log.info('controller started', { namespace: config.watchNamespace ?? '(all)', workers: config.workers });

    return {
      synced: () => informers.every((i) => i.synced),
      stop: async () => {
        clearInterval(resync);
        term.abort();
        queue.shutdown();
        await Promise.all([...informers, ...(pods ? [pods.informer] : [])].map((i) => i.stop()));
        await workers;
      },
    };
  }

  const server = await startProbeServer(
    config.metricsHost,
    config.metricsPort,
    metrics.registry,
    () => {
      const talking = performance.now() - elector.lastContact < config.leaseDurationMs * 2;
      if (!talking) return { ok: false, why: 'no answer from the API server lately' };
      if (elector.isLeader && !session?.synced()) return { ok: false, why: 'leading, caches not synced yet' };
      return { ok: true, why: elector.isLeader ? 'leading' : 'standby' };
    },
    config.metricsAuth === 'kubernetes' ? kubernetesMetricsAuthorizer(kube) : undefined,
  );
  elector.start();

  return {
    port: server.port,
    identity: config.identity,
    metrics,
    isLeader: () => elector.isLeader,
    reconciles: () => reconcileCount,
    stop: async () => {
      await elector.stop(); // stops the session through onStoppedLeading and releases the lease
      await session?.stop();
      await ending;
      await server.close();
      unobserve();
    },
  };
}
