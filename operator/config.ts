/** The operator's configuration: read from the environment once, validated, frozen. */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';

const seconds = (fallback: number) => z.coerce.number().positive().default(fallback);

const Schema = z.object({
  KUBECONFIG: z.string().optional(),
  WATCH_NAMESPACE: z.string().optional(),
  POD_NAMESPACE: z.string().default('default'),
  POD_NAME: z.string().optional(),
  LEASE_NAME: z.string().default('voice-operator-leader'),
  METRICS_HOST: z.string().default('0.0.0.0'),
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  RESYNC_SECONDS: seconds(300),
  WORKERS: z.coerce.number().int().min(1).max(64).default(4),
  LEASE_DURATION_SECONDS: seconds(15),
  RENEW_DEADLINE_SECONDS: seconds(10),
  RETRY_PERIOD_SECONDS: seconds(2),
  BLOCKED_RETRY_SECONDS: seconds(30),
});

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
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<OperatorConfig> {
  const parsed = Schema.safeParse(env);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`invalid operator configuration: ${issues}`);
  }
  const e = parsed.data;
  if (e.RENEW_DEADLINE_SECONDS >= e.LEASE_DURATION_SECONDS) throw new Error('invalid operator configuration: RENEW_DEADLINE_SECONDS must be below LEASE_DURATION_SECONDS');
  return Object.freeze({
    ...(e.KUBECONFIG ? { kubeconfig: e.KUBECONFIG } : {}),
    ...(e.WATCH_NAMESPACE ? { watchNamespace: e.WATCH_NAMESPACE } : {}),
    leaseNamespace: e.POD_NAMESPACE,
    leaseName: e.LEASE_NAME,
    identity: `${e.POD_NAME ?? hostname()}_${randomBytes(4).toString('hex')}`,
    metricsHost: e.METRICS_HOST,
    metricsPort: e.METRICS_PORT,
    resyncMs: e.RESYNC_SECONDS * 1000,
    workers: e.WORKERS,
    leaseDurationMs: e.LEASE_DURATION_SECONDS * 1000,
    renewDeadlineMs: e.RENEW_DEADLINE_SECONDS * 1000,
    retryPeriodMs: e.RETRY_PERIOD_SECONDS * 1000,
    blockedRetryMs: e.BLOCKED_RETRY_SECONDS * 1000,
  });
}
