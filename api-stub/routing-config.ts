import { parseAllowHosts } from './outbound/egress-guard.ts';
import { parseRetrySchedule } from './webhooks/retry-policy.ts';

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
  /** Per-attempt webhook timeout (spec: 8 s). */
  webhookTimeoutMs: number;
  /** Delays between attempts for endpoints that opted in to retries. */
  webhookRetrySchedule: readonly number[];
  /** How often the outbox is polled for due rows (enqueues also wake it at once). */
  webhookPollIntervalMs: number;
  /** How often the expiry sweeper runs. */
  sweepIntervalMs: number;
}

export const SPAWN_TIMEOUT_DEFAULT_MS = 10_000;
export const WEBHOOK_TIMEOUT_DEFAULT_MS = 8_000;

type Env = Readonly<Record<string, string | undefined>>;

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  if (!/^\d+$/.test(raw)) throw new Error(`${name}: expected an integer, got ${JSON.stringify(raw)}`);
  const value = Number(raw);
  if (value < min || value > max) throw new Error(`${name}: expected an integer from ${min} to ${max}, got ${value}`);
  return value;
}

function httpsUrl(env: Env, name: string): string | null {
  const raw = env[name]?.trim();
  if (!raw) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`${name}: expected an absolute https:// URL`);
  }
  if (url.protocol !== 'https:') throw new Error(`${name}: must be an https:// URL (the service only speaks HTTPS to pipelines)`);
  if (url.username || url.password) throw new Error(`${name}: must not carry credentials; use HOSTED_PIPELINE_KEY`);
  return url.toString();
}

export function loadRoutingConfig(env: Env): Readonly<RoutingConfig> {
  const hostedPipelineUrl = httpsUrl(env, 'HOSTED_PIPELINE_URL');
  const hostedPipelineKey = env.HOSTED_PIPELINE_KEY?.trim() || null;
  if (hostedPipelineUrl && !hostedPipelineKey) throw new Error('HOSTED_PIPELINE_KEY: required when HOSTED_PIPELINE_URL is set');
  return Object.freeze({
    hostedPipelineUrl,
    hostedPipelineKey,
    egressAllowHosts: parseAllowHosts(env.EGRESS_ALLOW_HOSTS),
    pipelineExtraCaFile: env.PIPELINE_EXTRA_CA_FILE?.trim() || null,
    spawnTimeoutMs: int(env, 'SPAWN_TIMEOUT_MS', SPAWN_TIMEOUT_DEFAULT_MS, 100, 60_000),
    spawnMaxInFlightPerWorkspace: int(env, 'SPAWN_MAX_IN_FLIGHT_PER_WORKSPACE', 8, 1, 10_000),
    webhookTimeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', WEBHOOK_TIMEOUT_DEFAULT_MS, 50, 60_000),
    webhookRetrySchedule: parseRetrySchedule(env.WEBHOOK_RETRY_SCHEDULE),
    webhookPollIntervalMs: int(env, 'WEBHOOK_POLL_INTERVAL_MS', 1_000, 10, 60_000),
    sweepIntervalMs: int(env, 'SWEEP_INTERVAL_MS', 30_000, 10, 3_600_000),
  });
}
