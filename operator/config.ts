/** The operator's configuration: read from the environment once, validated, frozen. */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { boolVar, ConfigError, intVar, numberVar, optionalString, type Env } from '../lib/env.ts';
import type { BuildOptions } from './resources/options.ts';

export interface OperatorConfig {
  kubeconfig?: string;
  /** Empty: all namespaces. */
  watchNamespace?: string;
  leaseNamespace: string;
  leaseName: string;
  identity: string;
  metricsHost: string;
  metricsPort: number;
  /** Who may read /metrics: `kubernetes` (TokenReview + SubjectAccessReview, metrics-auth.ts) or `none` (anyone who reaches the port). Absent: none. */
  metricsAuth?: 'kubernetes' | 'none';
  resyncMs: number;
  workers: number;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  blockedRetryMs: number;
  /** The deadline of one reconcile (RECONCILE_TIMEOUT_SECONDS, 60); absent: the runtime's default. */
  reconcileTimeoutMs?: number;
  /**
   * Client-side rate limit of API requests (watches excepted): none unless KUBE_API_QPS is set. As
   * controller-runtime since v0.21 (SIG API Machinery's advice), the API server's Priority and
   * Fairness sheds load instead, and the work queue (one entry per pool, backoff on errors) bounds
   * the operator's own rate. A bucket of 50/100 made a pool's children wait about 200 ms each
   * (docs/operator.md, "Client-side rate limit").
   */
  apiQps?: number;
  apiBurst?: number;
  /**
   * Namespaces where the operator may read (get) Secrets to check the keys a pool names; undefined:
   * everywhere it watches. Elsewhere it does not ask (no 403 per pass) and learns of a missing Secret
   * from the pods (readPodStatus) or from the rollout that does not complete.
   */
  secretNamespaces?: string[];
  /** Whether it may list a pool's pods to read why they cannot start (RBAC `pods: list`). */
  readPodStatus: boolean;
  /** Worker pod ids and NetworkPolicy (from the chart's values). */
  build: BuildOptions;
  /** How long a shutdown may take before the process exits anyway (the pod's grace period is longer). */
  shutdownTimeoutMs: number;
}

/** A comma-separated list of names; undefined when unset. */
function listVar(env: Env, name: string): string[] | undefined {
  const raw = env[name];
  if (raw === undefined) return undefined;
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** WORKER_RUN_AS_USER: a uid for runAsUser/runAsGroup/fsGroup, or `platform` to leave them to it. */
function runAsUser(env: Env): number | undefined {
  if (optionalString(env, 'WORKER_RUN_AS_USER') === 'platform') return undefined;
  return intVar(env, 'WORKER_RUN_AS_USER', { default: 1000, min: 1, max: 2 ** 31 - 1 });
}

/** A positive duration in seconds (decimals allowed), returned in milliseconds. */
const millis = (env: Env, name: string, defaultSeconds: number) => numberVar(env, name, { default: defaultSeconds, above: 0 }) * 1000;

function metricsAuthVar(env: Env): 'kubernetes' | 'none' {
  const value = optionalString(env, 'METRICS_AUTH') ?? 'kubernetes';
  if (value !== 'kubernetes' && value !== 'none') throw new ConfigError('METRICS_AUTH', `must be kubernetes or none, got "${value}"`);
  return value;
}

/** The token bucket's rate and burst when KUBE_API_QPS is set; nothing (no client-side limit) otherwise. */
function apiRateLimit(env: Env): { apiQps?: number; apiBurst?: number } {
  if (optionalString(env, 'KUBE_API_QPS') === undefined) {
    if (optionalString(env, 'KUBE_API_BURST') !== undefined)
      throw new ConfigError('KUBE_API_BURST', 'needs KUBE_API_QPS (there is no client-side rate limit without it)');
    return {};
  }
  return {
    apiQps: numberVar(env, 'KUBE_API_QPS', { default: 0, above: 0 }),
    apiBurst: intVar(env, 'KUBE_API_BURST', { default: 100, min: 1, max: 10_000 }),
  };
}

export function loadConfig(env: Env = process.env): Readonly<OperatorConfig> {
  const kubeconfig = optionalString(env, 'KUBECONFIG');
  const watchNamespace = optionalString(env, 'WATCH_NAMESPACE');
  const config: OperatorConfig = {
    ...(kubeconfig ? { kubeconfig } : {}),
    ...(watchNamespace ? { watchNamespace } : {}),
    leaseNamespace: optionalString(env, 'POD_NAMESPACE') ?? 'default',
    leaseName: optionalString(env, 'LEASE_NAME') ?? 'voice-operator-leader',
    identity: `${optionalString(env, 'POD_NAME') ?? hostname()}_${randomBytes(4).toString('hex')}`,
    metricsHost: optionalString(env, 'METRICS_HOST') ?? '0.0.0.0',
    metricsPort: intVar(env, 'METRICS_PORT', { default: 8080, min: 0, max: 65535 }),
    metricsAuth: metricsAuthVar(env),
    resyncMs: millis(env, 'RESYNC_SECONDS', 300),
    workers: intVar(env, 'WORKERS', { default: 4, min: 1, max: 64 }),
    leaseDurationMs: millis(env, 'LEASE_DURATION_SECONDS', 15),
    renewDeadlineMs: millis(env, 'RENEW_DEADLINE_SECONDS', 10),
    retryPeriodMs: millis(env, 'RETRY_PERIOD_SECONDS', 2),
    blockedRetryMs: millis(env, 'BLOCKED_RETRY_SECONDS', 30),
    reconcileTimeoutMs: millis(env, 'RECONCILE_TIMEOUT_SECONDS', 60),
    ...apiRateLimit(env),
    readPodStatus: boolVar(env, 'READ_POD_STATUS', { default: true }),
    build: buildOptions(env),
    shutdownTimeoutMs: millis(env, 'SHUTDOWN_TIMEOUT_SECONDS', 20),
  };
  const secretNamespaces = listVar(env, 'SECRET_NAMESPACES');
  if (secretNamespaces) config.secretNamespaces = secretNamespaces;
  if (config.renewDeadlineMs >= config.leaseDurationMs) {
    throw new ConfigError('RENEW_DEADLINE_SECONDS', `must be below LEASE_DURATION_SECONDS (${config.leaseDurationMs / 1000})`);
  }
  // client-go's rule: a renewal must fit several retries, or the leader steps down on one slow call.
  if (config.retryPeriodMs >= config.renewDeadlineMs) {
    throw new ConfigError('RETRY_PERIOD_SECONDS', `must be below RENEW_DEADLINE_SECONDS (${config.renewDeadlineMs / 1000})`);
  }
  return Object.freeze(config);
}

function buildOptions(env: Env): BuildOptions {
  const uid = runAsUser(env);
  return {
    ...(uid === undefined ? {} : { runAsUser: uid }),
    ...(boolVar(env, 'WORKER_NETWORK_POLICY', { default: false })
      ? { networkPolicy: { metricsNamespaces: listVar(env, 'WORKER_METRICS_NAMESPACES') ?? [] } }
      : {}),
    ...workerImage(env),
  };
}

/** WORKER_IMAGE_REPOSITORY (with its registry), _TAG and _DIGEST: the image of pools that name none. */
function workerImage(env: Env): Pick<BuildOptions, 'workerImage'> {
  const repository = optionalString(env, 'WORKER_IMAGE_REPOSITORY');
  if (!repository) return {};
  const digest = optionalString(env, 'WORKER_IMAGE_DIGEST');
  if (digest !== undefined && !/^sha256:[a-f0-9]{64}$/.test(digest))
    throw new ConfigError('WORKER_IMAGE_DIGEST', 'must be sha256:<64 hex digits>');
  return { workerImage: { repository, tag: optionalString(env, 'WORKER_IMAGE_TAG') ?? 'v1.3.0', ...(digest ? { digest } : {}) } };
}
