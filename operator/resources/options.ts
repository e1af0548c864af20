/**
 * What the operator's own configuration (not the pool) decides about every pool's children: the
 * worker pods' user and group ids, whether the workers get a NetworkPolicy, and the worker image of pools
 * that name none. Set from the chart's values through the operator's environment (operator/config.ts).
 */
import type { VoiceWorkerPool } from '../types.ts';

export interface BuildOptions {
  /**
   * runAsUser, runAsGroup and fsGroup of the worker pods. Undefined leaves all three to the platform
   * and the image (USER 1000:1000): OpenShift's restricted SCC assigns ids of its own range and
   * refuses pods that ask for others.
   */
  runAsUser?: number;
  /** A NetworkPolicy for each pool's workers; undefined: none. */
  networkPolicy?: {
    /** Namespaces whose pods (the scrapers) may reach the workers' metrics port. */
    metricsNamespaces: string[];
  };
  /**
   * The worker image of a pool without `spec.image` (chart: `workerImage`, `image.registry`). None: such
   * a pool is refused (InvalidSpec), never given a name that resolves to a registry holding nothing.
   */
  workerImage?: { repository: string; tag: string; digest?: string };
}

/** The pool with `spec.image` filled in from the operator's default; undefined when it has neither. */
export function withWorkerImage(pool: VoiceWorkerPool, options: BuildOptions): VoiceWorkerPool | undefined {
  // Typed as always present (every builder reads it); absent in a stored pool that takes the default.
  if ((pool.spec.image as VoiceWorkerPool['spec']['image'] | undefined) !== undefined) return pool;
  return options.workerImage
    ? { ...pool, spec: { ...pool.spec, image: { ...options.workerImage, pullPolicy: 'IfNotPresent' } } }
    : undefined;
}

/** Without configuration: fixed ids (the image's user), no NetworkPolicy. */
export const DEFAULT_BUILD_OPTIONS: Readonly<BuildOptions> = Object.freeze({ runAsUser: 1000 });
