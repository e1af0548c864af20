/**
 * Wires the parts together for one operator replica: leader election, and while leading the
 * informers on pools and their children, the work queue, the reconcile workers and a periodic
 * resync. main.ts, the tests and the benchmark all start the operator through here.
 */
import type { Logger } from '../lib/log.ts';
import { CHILD_RESOURCES, controllingPool } from './children.ts';
import type { OperatorConfig } from './config.ts';
import { resourcePath, type KubeClient } from './kube.ts';
import { LeaderElector } from './leader.ts';
import { CONTROLLER, createMetrics, type Metrics } from './metrics.ts';
import { WorkQueue } from './queue.ts';
import { reconcile, type ReconcileDeps } from './reconcile.ts';
import type { ChildKind } from './resources/index.ts';
import { startProbeServer } from './server.ts';
import { GROUP, MANAGED_BY, PLURAL, VERSION } from './types.ts';
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
      metrics.leader.set(1);
      session = startLeading();
    },
    onStoppedLeading: () => {
      metrics.leader.set(0);
      const s = session;
      session = undefined;
      if (s) ending = ending.then(() => s.stop());
    },
  });

  function startLeading() {
    const queue = new WorkQueue();
    const deps: ReconcileDeps = { kube, log, now: o.now ?? (() => new Date()), blockedRetryMs: config.blockedRetryMs };
    const generations = new Map<string, number | undefined>();
    const lifecycle = (resource: string) => (event: string, detail?: string) => {
      metrics.watchEvents.inc({ resource, event });
      if (event === 'error') log.warn('watch failed; retrying with backoff', { resource, detail });
      else log.debug(`watch ${event}`, { resource, detail });
    };
    const pools = new Informer({
      kube,
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
    const children = (Object.keys(CHILD_RESOURCES) as ChildKind[]).map(
      (kind) =>
        new Informer({
          kube,
          resource: CHILD_RESOURCES[kind].plural,
          path: collection(config.watchNamespace, CHILD_RESOURCES[kind]),
          labelSelector: `app.kubernetes.io/managed-by=${MANAGED_BY}`,
          ...(o.watchTimeoutSeconds ? { watchTimeoutSeconds: o.watchTimeoutSeconds } : {}),
          onLifecycle: lifecycle(CHILD_RESOURCES[kind].plural),
          onEvent: (_type, child) => {
            const owner = controllingPool(child as Parameters<typeof controllingPool>[0]);
            if (owner) queue.add(owner);
          },
        }),
    );
    const informers = [pools, ...children];
    for (const informer of informers) informer.start();

    const resync = setInterval(() => {
      for (const pool of pools.items()) queue.add(`${pool.metadata.namespace}/${pool.metadata.name}`);
    }, config.resyncMs);
    resync.unref();

    const worker = async () => {
      for (;;) {
        const key = await queue.get();
        if (key === undefined) return;
        metrics.queueDepth.set({ name: CONTROLLER }, queue.depth);
        const end = metrics.reconcileTime.startTimer({ controller: CONTROLLER });
        let outcome;
        try {
          outcome = await reconcile(deps, key);
        } catch (err) {
          outcome = { result: 'error' as const, error: err as Error };
        }
        end();
        reconcileCount++;
        if (outcome.result === 'error') {
          metrics.reconcileTotal.inc({ controller: CONTROLLER, result: 'error' });
          metrics.reconcileErrors.inc({ controller: CONTROLLER });
          const delay = queue.addRateLimited(key);
          log.warn('reconcile failed; retrying', { pool: key, retryInMs: delay, error: outcome.error });
        } else {
          queue.forget(key);
          metrics.reconcileTotal.inc({ controller: CONTROLLER, result: outcome.result === 'requeue' ? 'requeue_after' : 'success' });
          if (outcome.result === 'requeue') queue.addAfter(key, outcome.afterMs);
        }
        queue.done(key);
        metrics.queueDepth.set({ name: CONTROLLER }, queue.depth);
      }
    };
    const workers = Array.from({ length: config.workers }, worker);
    log.info('controller started', { namespace: config.watchNamespace ?? '(all)', workers: config.workers });

    return {
      synced: () => informers.every((i) => i.synced),
      stop: async () => {
        clearInterval(resync);
        queue.shutdown();
        await Promise.all(informers.map((i) => i.stop()));
        await Promise.all(workers);
      },
    };
  }

  const server = await startProbeServer(config.metricsHost, config.metricsPort, metrics.registry, () => {
    const talking = Date.now() - elector.lastContact < config.leaseDurationMs * 2;
    if (!talking) return { ok: false, why: 'no answer from the API server lately' };
    if (elector.isLeader && !session?.synced()) return { ok: false, why: 'leading, caches not synced yet' };
    return { ok: true, why: elector.isLeader ? 'leading' : 'standby' };
  });
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
    },
  };
}
