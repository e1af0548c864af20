/** The operator's configuration: read from the environment once, validated, frozen. */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { ConfigError, intVar, numberVar, optionalString, type Env } from '../lib/env.ts';

export interface OperatorConfig {
  kubeconfig?: string;
  /** Empty: all namespaces. */
  watchNamespace?: string;
  leaseNamespace: string;
  leaseName: string;
  identity: string;
  metricsHost: string;
  metricsPort: number;
  resyncMs: number;
  workers: number;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  blockedRetryMs: number;
  /** Client-side rate limit of API requests (watches excepted), controller-runtime's defaults. */
  apiQps: number;
  apiBurst: number;
}

/** A positive duration in seconds (decimals allowed), returned in milliseconds. */
const millis = (env: Env, name: string, defaultSeconds: number) => numberVar(env, name, { default: defaultSeconds, above: 0 }) * 1000;

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
    resyncMs: millis(env, 'RESYNC_SECONDS', 300),
    workers: intVar(env, 'WORKERS', { default: 4, min: 1, max: 64 }),
    leaseDurationMs: millis(env, 'LEASE_DURATION_SECONDS', 15),
    renewDeadlineMs: millis(env, 'RENEW_DEADLINE_SECONDS', 10),
    retryPeriodMs: millis(env, 'RETRY_PERIOD_SECONDS', 2),
    blockedRetryMs: millis(env, 'BLOCKED_RETRY_SECONDS', 30),
    apiQps: numberVar(env, 'KUBE_API_QPS', { default: 20, above: 0 }),
    apiBurst: intVar(env, 'KUBE_API_BURST', { default: 30, min: 1, max: 10_000 }),
  };
  if (config.renewDeadlineMs >= config.leaseDurationMs) {
    throw new ConfigError('RENEW_DEADLINE_SECONDS', `must be below LEASE_DURATION_SECONDS (${config.leaseDurationMs / 1000})`);
  }
  // client-go's rule: a renewal must fit several retries, or the leader steps down on one slow call.
  if (config.retryPeriodMs >= config.renewDeadlineMs) {
    throw new ConfigError('RETRY_PERIOD_SECONDS', `must be below RENEW_DEADLINE_SECONDS (${config.renewDeadlineMs / 1000})`);
  }
  return Object.freeze(config);
}
