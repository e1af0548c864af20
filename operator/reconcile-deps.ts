import type { Logger } from '../lib/log.ts';
import type { KubeClient } from './kube.ts';
import type { PodStatusView } from './pod-secrets.ts';
import type { BuildOptions, ChildKind } from './resources/index.ts';
import type { KubeObject, VoiceWorkerPool } from './types.ts';

/** What one reconcile pass is given: clients, clock and caches (the status writer takes them too). */
export interface ReconcileDeps {
  kube: KubeClient;
  log: Logger;
  now: () => Date;
  /** How soon a pool blocked by a missing Secret is looked at again (Secrets are not watched). */
  blockedRetryMs: number;
  /** The informers' caches: reads come from here instead of a GET per reconcile (absent: GETs). */
  cache?: ReconcileCache;
  /** Warning Events already sent (pool uid/reason to message), so a stale cache does not repeat them. */
  sentEvents?: Map<string, string>;
  /** Worker pod ids and NetworkPolicy (the operator's configuration). */
  buildOptions?: BuildOptions;
  /** Namespaces where Secrets may be read; undefined: all. Elsewhere none is asked for. */
  secretNamespaces?: readonly string[];
  /** May read a pool's pods to learn why they cannot start (default true). */
  readPodStatus?: boolean;
}

export interface ReconcileCache {
  /** The pool as the informer last saw it; undefined when it is not there (deleted). */
  pool(namespace: string, name: string): VoiceWorkerPool | undefined;
  /** A child of the operator as its informer last saw it. */
  child(kind: ChildKind, namespace: string, name: string): KubeObject | undefined;
  /** The pool's pods (workers and speech server) as their informer last saw them; absent without pod reads. */
  pods?(namespace: string, pool: string): PodStatusView[];
}
