import { intVar, type Env } from '../../lib/env.ts';

/**
 * How long the api-stub keeps what it no longer needs (docs/api.md, "Retention"). Pure; errors name
 * the variable. Idempotency keys are pruned at their own TTL (IDEMPOTENCY_TTL_SECONDS): past it they
 * are never honoured again, so keeping them only costs space.
 */
export interface RetentionConfig {
  /** Days a COMPLETED or EXPIRED session (with its response) is kept after it finished. */
  sessionDays: number;
  /**
   * Days a webhook event, its settled outbox rows and its delivery-log rows are kept. A pending
   * outbox row (and its event) or an attempt still in flight is never pruned, whatever its age.
   */
  webhookDays: number;
  /** How often the pruner runs (the first pass runs at start). */
  intervalSeconds: number;
  /** Rows deleted per transaction; the pruner yields to requests between batches. */
  batchRows: number;
}

export const RETENTION_DEFAULTS: Readonly<RetentionConfig> = Object.freeze({
  sessionDays: 30,
  webhookDays: 30,
  intervalSeconds: 3600,
  batchRows: 500,
});

export function loadRetentionConfig(env: Env): Readonly<RetentionConfig> {
  return Object.freeze({
    sessionDays: intVar(env, 'RETENTION_SESSION_DAYS', { default: RETENTION_DEFAULTS.sessionDays, min: 1, max: 3650 }),
    webhookDays: intVar(env, 'RETENTION_WEBHOOK_DAYS', { default: RETENTION_DEFAULTS.webhookDays, min: 1, max: 3650 }),
    intervalSeconds: intVar(env, 'RETENTION_INTERVAL_SECONDS', { default: RETENTION_DEFAULTS.intervalSeconds, min: 1, max: 7 * 86_400 }),
    batchRows: intVar(env, 'RETENTION_BATCH_ROWS', { default: RETENTION_DEFAULTS.batchRows, min: 1, max: 100_000 }),
  });
}
