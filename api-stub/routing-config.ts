import { ConfigError, intVar, optionalString, urlVar, type Env } from '../lib/env.ts';
import { parseAllowHosts } from './outbound/egress-guard.ts';
import { parseRetrySchedule } from './webhooks/retry-policy.ts';
import { STARTED_SESSION_GRACE_DEFAULT_SECONDS } from './sessions/expiry-rule.ts';

/**
 * Settings of connect routing, outcome reports, expiry and webhook delivery (issue 3), read once
 * with the rest of the api-stub's config (config.ts embeds them as `routing`). Pure; errors name
 * the variable.
 */
export interface RoutingConfig {
  /** The hosted pipeline's spawn URL (https), or null when none is configured. */
  hostedPipelineUrl: string | null;
  /** Bearer key the api-stub sends to the hosted pipeline (and expects on its outcome reports). */
  hostedPipelineKey: string | null;
  /** Hosts exempt from the private-address check (tests and local demos: 127.0.0.1, localhost). */
  egressAllowHosts: ReadonlySet<string>;
  /** An extra PEM CA bundle trusted for TLS to workers and webhook receivers. */
  pipelineExtraCaFile: string | null;
  /** The whole budget of one spawn, decryption included (spec: 10 s). */
  spawnTimeoutMs: number;
  /** Spawns in flight at once per workspace; more answer 429 with Retry-After. */
  spawnMaxInFlightPerWorkspace: number;
  /** Hosted sessions a workspace may hold at once on the shared hosted capacity; connect answers 429 past it. */
  hostedSessionsPerWorkspace: number;
  /**
   * Slots of the hosted pool, when known: each workspace's cap is then also a fair share of it
   * (connect/hosted-share.ts). Null: learned from the pool's 503s.
   */
  hostedPipelineCapacity: number | null;
  /** How long a hosted spawn counts as held without an outcome: the worker's join timeout plus its longest session. */
  hostedSessionHoldSeconds: number;
  /** Per-attempt webhook timeout (spec: 8 s). */
  webhookTimeoutMs: number;
  /** Delays between attempts for endpoints that opted in to retries. */
  webhookRetrySchedule: readonly number[];
  /** How often the outbox is polled for due rows (enqueues also wake it at once). */
  webhookPollIntervalMs: number;
  /** How often the expiry sweeper runs. */
  sweepIntervalMs: number;
  /** How long past expiresAt an interview that started may still complete (contract C5). */
  startedSessionGraceSeconds: number;
}

export const SPAWN_TIMEOUT_DEFAULT_MS = 10_000;
export const WEBHOOK_TIMEOUT_DEFAULT_MS = 8_000;

/** The spawn URL, kept as the URL parser spells it; credentials belong in HOSTED_PIPELINE_KEY. */
function pipelineUrl(env: Env): string | null {
  // The service only speaks HTTPS to pipelines.
  const raw = urlVar(env, 'HOSTED_PIPELINE_URL', { schemes: ['https'], keepTrailingSlash: true });
  if (raw === undefined) return null;
  const url = new URL(raw);
  if (url.username || url.password) throw new ConfigError('HOSTED_PIPELINE_URL', 'must not carry credentials; use HOSTED_PIPELINE_KEY');
  return url.toString();
}

export function loadRoutingConfig(env: Env): Readonly<RoutingConfig> {
  const hostedPipelineUrl = pipelineUrl(env);
  const hostedPipelineKey = optionalString(env, 'HOSTED_PIPELINE_KEY') ?? null;
  if (hostedPipelineUrl && !hostedPipelineKey) throw new ConfigError('HOSTED_PIPELINE_KEY', 'required when HOSTED_PIPELINE_URL is set');
  return Object.freeze({
    hostedPipelineUrl,
    hostedPipelineKey,
    egressAllowHosts: parseAllowHosts(env.EGRESS_ALLOW_HOSTS),
    pipelineExtraCaFile: optionalString(env, 'PIPELINE_EXTRA_CA_FILE') ?? null,
    spawnTimeoutMs: intVar(env, 'SPAWN_TIMEOUT_MS', { default: SPAWN_TIMEOUT_DEFAULT_MS, min: 100, max: 60_000 }),
    spawnMaxInFlightPerWorkspace: intVar(env, 'SPAWN_MAX_IN_FLIGHT_PER_WORKSPACE', { default: 8, min: 1, max: 10_000 }),
    hostedSessionsPerWorkspace: intVar(env, 'HOSTED_SESSIONS_PER_WORKSPACE', { default: 20, min: 1, max: 1_000_000 }),
    hostedPipelineCapacity:
      env.HOSTED_PIPELINE_CAPACITY === undefined || env.HOSTED_PIPELINE_CAPACITY === ''
        ? null
        : intVar(env, 'HOSTED_PIPELINE_CAPACITY', { default: 1, min: 1, max: 1_000_000 }),
    // Default: the worker's 30 s join timeout (C6) plus its 30 min longest session (MAX_SESSION_SECONDS).
    hostedSessionHoldSeconds: intVar(env, 'HOSTED_SESSION_HOLD_SECONDS', { default: 30 + 1800, min: 1, max: 86_400 }),
    webhookTimeoutMs: intVar(env, 'WEBHOOK_TIMEOUT_MS', { default: WEBHOOK_TIMEOUT_DEFAULT_MS, min: 50, max: 60_000 }),
    webhookRetrySchedule: parseRetrySchedule(env.WEBHOOK_RETRY_SCHEDULE),
    webhookPollIntervalMs: intVar(env, 'WEBHOOK_POLL_INTERVAL_MS', { default: 1_000, min: 10, max: 60_000 }),
    sweepIntervalMs: intVar(env, 'SWEEP_INTERVAL_MS', { default: 30_000, min: 10, max: 3_600_000 }),
    startedSessionGraceSeconds: intVar(env, 'STARTED_SESSION_GRACE_SECONDS', {
      default: STARTED_SESSION_GRACE_DEFAULT_SECONDS,
      min: 0,
      max: 30 * 86_400,
    }),
  });
}
