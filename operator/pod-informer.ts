/**
 * The pools' pods, so a pool can say why its workers or speech server do not run (pod-health.ts).
 * An informer on pods with the pool label, indexed by pool; a pod's change enqueues its pool only
 * when what the status is computed from changed (not on every probe). RBAC: pods list and watch.
 */
import { trimPod } from './cache-transform.ts';
import { podFingerprint } from './pod-health.ts';
import type { PodStatusView } from './pod-secrets.ts';
import { resourcePath, type KubeClient } from './kube.ts';
import { POOL_LABEL, type VoiceWorkerPool } from './types.ts';
import { Informer, type InformerOptions, type KubeItem } from './watch.ts';

export interface PoolPods {
  informer: Informer;
  /** The pods of a pool (namespace, name) as last seen. */
  pods(namespace: string, pool: string): PodStatusView[];
}

type Options = Pick<InformerOptions, 'kube' | 'watchTimeoutSeconds' | 'onLifecycle'> & {
  namespace: string | undefined;
  /** Called with a pool's key (namespace/name) when one of its pods changed in a way that matters. */
  enqueue: (key: string) => void;
};

export function poolPodInformer(o: Options): PoolPods {
  const byPool = new Map<string, Map<string, PodStatusView>>();
  /** Per pod: its pool's key and the fingerprint last seen. */
  const seen = new Map<string, { pool: string; print: string }>();
  const drop = (poolKey: string, podKey: string) => {
    const pods = byPool.get(poolKey);
    if (pods?.delete(podKey) && pods.size === 0) byPool.delete(poolKey);
  };
  const informer = new Informer({
    kube: o.kube,
    resource: 'pods',
    path: resourcePath({ group: '', version: 'v1', plural: 'pods', ...(o.namespace ? { namespace: o.namespace } : {}) }),
    labelSelector: POOL_LABEL,
    transform: trimPod,
    ...(o.watchTimeoutSeconds ? { watchTimeoutSeconds: o.watchTimeoutSeconds } : {}),
    ...(o.onLifecycle ? { onLifecycle: o.onLifecycle } : {}),
    onEvent: (type, item: KubeItem) => {
      const pod = item as unknown as PodStatusView;
      const podKey = `${pod.metadata.namespace ?? ''}/${pod.metadata.name}`;
      const poolKey = `${pod.metadata.namespace ?? ''}/${pod.metadata.labels?.[POOL_LABEL] ?? ''}`;
      const before = seen.get(podKey);
      if (before && before.pool !== poolKey) {
        drop(before.pool, podKey); // relabelled: no longer that pool's
        o.enqueue(before.pool);
      }
      if (type === 'DELETED') {
        drop(poolKey, podKey);
        seen.delete(podKey);
        return o.enqueue(poolKey);
      }
      if (!byPool.has(poolKey)) byPool.set(poolKey, new Map());
      byPool.get(poolKey)!.set(podKey, pod);
      const print = podFingerprint(pod);
      seen.set(podKey, { pool: poolKey, print });
      if (before?.pool !== poolKey || before.print !== print) o.enqueue(poolKey);
    },
  });
  return { informer, pods: (namespace, pool) => [...(byPool.get(`${namespace}/${pool}`)?.values() ?? [])] };
}

/** One list of a pool's pods, where no informer holds them; undefined when pods may not be listed. */
export async function listPoolPods(kube: KubeClient, pool: VoiceWorkerPool): Promise<PodStatusView[] | undefined> {
  try {
    const list = await kube.request<{ items: PodStatusView[] }>(
      'GET',
      resourcePath({ group: '', version: 'v1', plural: 'pods', namespace: pool.metadata.namespace }),
      {
        query: { labelSelector: `${POOL_LABEL}=${pool.metadata.name}` },
      },
    );
    return list.items;
  } catch {
    return undefined; // no pod access: nothing more to learn here
  }
}
