/**
 * What the operator's own configuration (not the pool) decides about every pool's children: the
 * worker pods' user and group ids, and whether the workers get a NetworkPolicy. Set from the
 * chart's values through the operator's environment (operator/config.ts).
 */
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
}

/** Without configuration: fixed ids (the image's user), no NetworkPolicy. */
export const DEFAULT_BUILD_OPTIONS: Readonly<BuildOptions> = Object.freeze({ runAsUser: 1000 });
