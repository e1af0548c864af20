/**
 * The api-stub's configuration, read once from the environment, validated and frozen.
 * `loadConfig(env)` is pure: it takes the environment as an argument and never reads process.env.
 * A bad value throws an error that names the variable and says what is expected.
 */
import { ConfigError, intVar, optionalString, urlVar, type Env } from '../lib/env.ts';
import { readListenLimits, type ListenLimits } from '../lib/listen-limits.ts';
import { loadRoutingConfig, type RoutingConfig } from './routing-config.ts';
import { loadRetentionConfig, type RetentionConfig } from './retention/retention-config.ts';

export interface RateCapConfig {
  /** Requests per workspace per clock hour (all session API calls together). */
  hourly: number;
  /** Requests per workspace per second: the "service cap", a burst cap. */
  perSecond: number;
}

/**
 * `production` (the default) refuses to start without PIPELINE_KEK, so that no secret is ever stored
 * in clear by accident; `development` allows it, and says so loudly at every start.
 */
export type ApiStubMode = 'production' | 'development';

export interface ApiStubConfig {
  mode: ApiStubMode;
  port: number;
  host: string;
  /** Path of the SQLite file; ':memory:' keeps nothing across restarts. */
  dbPath: string;
  /** Path of the seed JSON applied (upserted) at start, or null. */
  seedPath: string | null;
  /**
   * Base of respondent page addresses: sessionUrl = `${publicUrl}/s/${sessionId}?from=sdk#k=<capability>`.
   * Null when PUBLIC_URL is unset: then `http://127.0.0.1:<the port the request arrived on>`,
   * which stays right when PORT=0 lets the OS pick the port.
   */
  publicUrl: string | null;
  /** Life of a session link before expiresAt (capped by the deployment's own expiresAt). */
  sessionTtlSeconds: number;
  /** Caps of calls made with a secret key (retrieval, settings, delivery log). */
  rateCaps: RateCapConfig;
  /** Caps of calls made with a publishable key (creation, connect): a budget of its own. */
  publishableRateCaps: RateCapConfig;

  /** How long an Idempotency-Key on session creation is remembered. */
  idempotencyTtlSeconds: number;
  /** Largest accepted JSON body, in bytes. */
  bodyLimitBytes: number;
  /** Largest accepted `metadata`, as serialized JSON, in bytes. */
  metadataLimitBytes: number;
  /** Connect routing, outcome reports, expiry and webhook delivery (api-stub/routing-config.ts). */
  routing: Readonly<RoutingConfig>;
  /** The port's connection cap and timeouts (HTTP_*: lib/listen-limits.ts, docs/api.md "Connection limits"). */
  listenLimits: ListenLimits;
  /** What is pruned when (api-stub/retention/retention-config.ts; docs/api.md, "Retention"). */
  retention: Readonly<RetentionConfig>;
}

export { ConfigError };

export function loadConfig(env: Env): Readonly<ApiStubConfig> {
  const port = intVar(env, 'PORT', { default: 8080, min: 0, max: 65535 });
  const host = optionalString(env, 'HOST') ?? '127.0.0.1';
  const hourly = intVar(env, 'RATE_CAP_HOURLY', { default: 10_000, min: 1, max: 1_000_000_000 });
  const perSecond = intVar(env, 'RATE_CAP_PER_SECOND', { default: 100, min: 1, max: 1_000_000_000 });
  const mode = optionalString(env, 'API_STUB_MODE') ?? 'production';
  if (mode !== 'production' && mode !== 'development')
    throw new ConfigError('API_STUB_MODE', `expected production or development, got ${JSON.stringify(mode.slice(0, 40))}`);
  const config: ApiStubConfig = {
    mode,
    port,
    host,
    dbPath: optionalString(env, 'API_STUB_DB') ?? 'api-stub.sqlite',
    seedPath: optionalString(env, 'API_STUB_SEED') ?? null,
    publicUrl: urlVar(env, 'PUBLIC_URL', { schemes: ['http', 'https'], allowQuery: false }) ?? null,
    sessionTtlSeconds: intVar(env, 'SESSION_TTL_SECONDS', { default: 86_400, min: 1, max: 365 * 86_400 }),
    rateCaps: Object.freeze({ hourly, perSecond }),
    publishableRateCaps: Object.freeze({
      hourly: intVar(env, 'RATE_CAP_HOURLY_PUBLISHABLE', { default: hourly, min: 1, max: 1_000_000_000 }),
      perSecond: intVar(env, 'RATE_CAP_PER_SECOND_PUBLISHABLE', { default: perSecond, min: 1, max: 1_000_000_000 }),
    }),

    idempotencyTtlSeconds: intVar(env, 'IDEMPOTENCY_TTL_SECONDS', { default: 86_400, min: 60, max: 30 * 86_400 }),
    bodyLimitBytes: intVar(env, 'BODY_LIMIT_BYTES', { default: 64 * 1024, min: 1024, max: 10 * 1024 * 1024 }),
    metadataLimitBytes: intVar(env, 'METADATA_LIMIT_BYTES', { default: 16 * 1024, min: 2, max: 10 * 1024 * 1024 }),
    routing: loadRoutingConfig(env),
    // Keep-alive longer than the usual load balancer's 60 s idle timeout, so that it never reuses a connection we just closed.
    listenLimits: readListenLimits(env, 'HTTP', { maxConnections: 1000, headersTimeoutSeconds: 10, keepAliveTimeoutSeconds: 65 }),
    retention: loadRetentionConfig(env),
  };
  if (config.metadataLimitBytes >= config.bodyLimitBytes) {
    throw new ConfigError('METADATA_LIMIT_BYTES', `must be smaller than BODY_LIMIT_BYTES (${config.bodyLimitBytes})`);
  }
  return Object.freeze(config);
}
