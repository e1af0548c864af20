/**
 * Wires the parts together for one operator replica: leader election, and while leading the
 * informers on pools and their children, the work queue, the reconcile workers and a periodic
 * resync. main.ts, the tests and the benchmark all start the operator through here.
 */
import type { Logger } from '../lib/log.ts';
import { CHILD_RESOURCES, controllingPool } from './children.ts';
import type { OperatorConfig } from './config.ts';
import { clampDelay } from './delay.ts';
import { resourcePath, type KubeClient } from './kube.ts';
import { LeaderElector } from './leader.ts';
import { poolPodInformer } from './pod-informer.ts';
import { CONTROLLER, createMetrics, type Metrics } from './metrics.ts';
import { WorkQueue } from './queue.ts';
import { reconcile, type Outcome, type ReconcileDeps } from './reconcile.ts';
import type { ChildKind } from './resources/index.ts';
import { childFingerprint } from './children.ts';
import { kubernetesMetricsAuthorizer } from './metrics-auth.ts';
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
  metrics.maxConcurrent.set({ controller: CONTROLLER }, config.workers);
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
    const name = { name: CONTROLLER };
    const queue = new WorkQueue({
      observer: {
        added: () => metrics.queueAdds.inc(name),
        retried: () => metrics.retries.inc(name),
        waited: (seconds) => metrics.queueLatency.observe(name, seconds),
      },
    });
    // Every API call of this leadership term goes through a client that is cut off when it ends.
    const term = new AbortController();
    const scoped = kube.scoped(term.signal);
    const generations = new Map<string, number | undefined>();
    const lifecycle = (resource: string) => (event: string, detail?: string) => {
      metrics.watchEvents.inc({ resource, event });
      if (event === 'error') log.warn('watch failed; retrying with backoff', { resource, detail });
      else log.debug(`watch ${event}`, { resource, detail });
    };
    const pools = new Informer({
      kube: scoped,
      resource: PLURAL,
      path: collection(config.watchNamespace, { group: GROUP, version: VERSION, plural: PLURAL }),
      ...(o.watchTimeoutSeconds ? { watchTimeoutSeconds: o.watchTimeoutSeconds } : {}),
      onLifecycle: lifecycle(PLURAL),
      onEvent: (type, pool: KubeItem) => {
        const key = `${pool.metadata.namespace}/${pool.metadata.name}`;
        const generation = pool.metadata.generation as number | undefined;
        // Our own status writes change no generation: skipping them avoids a reconcile per write.
        if (type === 'MODIFIED' && generations.get(key) === generation) return;
        if (type === 'DELETED') generations.delete(key);
        else generations.set(key, generation);
        queue.add(key);
      },
    });
    /** The last fingerprint of each child; a change only of status (an HPA's metrics) is ignored. */
    const fingerprints = new Map<string, string>();
    const children = (Object.keys(CHILD_RESOURCES) as ChildKind[]).map(
      (kind) =>
        new Informer({
          kube: scoped,
          resource: CHILD_RESOURCES[kind].plural,
          path: collection(config.watchNamespace, CHILD_RESOURCES[kind]),
          labelSelector: `app.kubernetes.io/managed-by=${MANAGED_BY}`,
          ...(o.watchTimeoutSeconds ? { watchTimeoutSeconds: o.watchTimeoutSeconds } : {}),
          onLifecycle: lifecycle(CHILD_RESOURCES[kind].plural),
          onEvent: (type, child) => {
            const key = `${kind}/${child.metadata.namespace ?? ''}/${child.metadata.name}`;
            const print = childFingerprint(kind, child);
            if (type === 'DELETED') fingerprints.delete(key);
            else if (type === 'MODIFIED' && fingerprints.get(key) === print) return;
            else fingerprints.set(key, print);
            const owner = controllingPool(child as Parameters<typeof controllingPool>[0]);
            if (owner) queue.add(owner);
          },
        }),
    );
    // The pools' pods, to say why they do not run (only with READ_POD_STATUS: it needs pods list and watch).
    const pods = config.readPodStatus
      ? poolPodInformer({ kube: scoped, namespace: config.watchNamespace, onLifecycle: lifecycle('pods'), enqueue: (key) => queue.add(key), ...(o.watchTimeoutSeconds ? { watchTimeoutSeconds: o.watchTimeoutSeconds } : {}) })
      : undefined;
    const informers = [pools, ...children];
    const childInformers = new Map((Object.keys(CHILD_RESOURCES) as ChildKind[]).map((kind, i) => [kind, children[i]!]));
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
        child: (kind, ns, n) => childInformers.get(kind)?.get(`${ns}/${n}`) as unknown as KubeObject | undefined,
        ...(pods ? { pods: pods.pods } : {}),
      },
    };
    for (const informer of informers) informer.start();
    pods?.informer.start(); // not waited for: a pod not seen yet only means no problem known yet

    const resync = setInterval(() => {
      for (const pool of pools.items()) queue.add(`${pool.metadata.namespace}/${pool.metadata.name}`);
    }, clampDelay(config.resyncMs));
    resync.unref();

    const controller = { controller: CONTROLLER };
    // No reconcile before every cache holds a full list: until then a miss would read as "absent"
    // (a child to create or hand the floor to again, a pool deleted). controller-runtime waits too.
    const synced = Promise.all(informers.map((i) => i.whenSynced));
    const worker = async () => {
      await synced;
      for (;;) {
        const key = await queue.get();
        if (key === undefined) return;
        metrics.queueDepth.set(name, queue.depth);
        metrics.activeWorkers.inc(controller);
        const endReconcile = metrics.reconcileTime.startTimer(controller);
        const endWork = metrics.workDuration.startTimer(name);
        let outcome: Outcome;
        try {
          outcome = await reconcile(deps, key);
        } catch (err) {
          outcome = { result: 'error', error: err as Error };
        }
        endReconcile();
        endWork();
        metrics.activeWorkers.dec(controller);
        reconcileCount++;
        if (term.signal.aborted) {
          queue.done(key); // the term ended under this reconcile: its result no longer counts
          return;
        }
        if (outcome.result === 'error') {
          metrics.reconcileTotal.inc({ ...controller, result: 'error' });
          metrics.reconcileErrors.inc(controller);
          const delay = queue.addRateLimited(key);
          log.warn('reconcile failed; retrying', { pool: key, retryInMs: delay, error: outcome.error });
        } else {
          queue.forget(key);
          // A blocked pool is an error no retry fixes (controller-runtime's TerminalError): counted as one.
          if (outcome.blocked) {
            metrics.reconcileTotal.inc({ ...controller, result: 'error' });
            metrics.reconcileErrors.inc(controller);
            metrics.terminalErrors.inc(controller);
          } else metrics.reconcileTotal.inc({ ...controller, result: outcome.result === 'requeue' ? 'requeue_after' : 'success' });
          if (outcome.result === 'requeue') queue.addAfter(key, outcome.afterMs);
        }
        queue.done(key);
        metrics.queueDepth.set(name, queue.depth);
      }
    };
    const unfinished = setInterval(() => {
      const running = queue.inFlightSeconds();
      metrics.unfinishedWork.set(name, running.reduce((a, b) => a + b, 0));
      metrics.longestRunning.set(name, Math.max(0, ...running));
    }, 1000);
    unfinished.unref();
    const workers = Array.from({ length: config.workers }, worker);
    log.info('controller started', { namespace: config.watchNamespace ?? '(all)', workers: config.workers });

    return {
      synced: () => informers.every((i) => i.synced),
      stop: async () => {
        clearInterval(resync);
        clearInterval(unfinished);
        term.abort();
        queue.shutdown();
        await Promise.all([...informers, ...(pods ? [pods.informer] : [])].map((i) => i.stop()));
        await Promise.all(workers);
      },
    };
  }

  const server = await startProbeServer(config.metricsHost, config.metricsPort, metrics.registry, () => {
    const talking = performance.now() - elector.lastContact < config.leaseDurationMs * 2;
    if (!talking) return { ok: false, why: 'no answer from the API server lately' };
    if (elector.isLeader && !session?.synced()) return { ok: false, why: 'leading, caches not synced yet' };
    return { ok: true, why: elector.isLeader ? 'leading' : 'standby' };
  }, config.metricsAuth === 'kubernetes' ? kubernetesMetricsAuthorizer(kube) : undefined);
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
