/**
 * The api-stub's configuration, read once from the environment, validated and frozen.
 * `loadConfig(env)` is pure: it takes the environment as an argument and never reads process.env.
 * A bad value throws an error that names the variable and says what is expected.
 */
import { loadRoutingConfig, type RoutingConfig } from './routing-config.ts';

export interface RateCapConfig {
  /** Requests per workspace per clock hour (all session API calls together). */
  hourly: number;
  /** Requests per workspace per second: the "service cap", a burst cap. */
  perSecond: number;
}

export interface ApiStubConfig {
  port: number;
  host: string;
  /** Path of the SQLite file; ':memory:' keeps nothing across restarts. */
  dbPath: string;
  /** Path of the seed JSON applied (upserted) at start, or null. */
  seedPath: string | null;
  /**
   * Base of respondent page addresses: sessionUrl = `${publicUrl}/s/${sessionId}?from=sdk`.
   * Null when PUBLIC_URL is unset: then `http://127.0.0.1:<the port the request arrived on>`,
   * which stays right when PORT=0 lets the OS pick the port.
   */
  publicUrl: string | null;
  /** Life of a session link before expiresAt (capped by the deployment's own expiresAt). */
  sessionTtlSeconds: number;
  rateCaps: RateCapConfig;
  /** How long an Idempotency-Key on session creation is remembered. */
  idempotencyTtlSeconds: number;
  /** Largest accepted JSON body, in bytes. */
  bodyLimitBytes: number;
  /** Largest accepted `metadata`, as serialized JSON, in bytes. */
  metadataLimitBytes: number;
  /** Connect routing, outcome reports, expiry and webhook delivery (api-stub/routing-config.ts). */
  routing: Readonly<RoutingConfig>;
}

export type Env = Readonly<Record<string, string | undefined>>;

export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`${variable}: ${problem}`);
    this.name = 'ConfigError';
  }
}

/** Reads an integer variable with a default and an inclusive range. */
export function intVar(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(name, `expected an integer, got ${JSON.stringify(raw)}`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw new ConfigError(name, `expected an integer from ${min} to ${max}, got ${value}`);
  return value;
}

function urlVar(env: Env, name: string): string | null {
  const raw = env[name]?.trim();
  if (!raw) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `expected an absolute http(s) URL, got ${JSON.stringify(raw)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(name, `expected an http(s) URL, got ${url.protocol}`);
  if (url.search || url.hash) throw new ConfigError(name, 'must not carry a query or fragment');
  return raw.replace(/\/+$/, '');
}

export function loadConfig(env: Env): Readonly<ApiStubConfig> {
  const port = intVar(env, 'PORT', 8080, 0, 65535);
  const host = env.HOST?.trim() || '127.0.0.1';
  const config: ApiStubConfig = {
    port,
    host,
    dbPath: env.API_STUB_DB?.trim() || 'api-stub.sqlite',
    seedPath: env.API_STUB_SEED?.trim() || null,
    publicUrl: urlVar(env, 'PUBLIC_URL'),
    sessionTtlSeconds: intVar(env, 'SESSION_TTL_SECONDS', 86_400, 1, 365 * 86_400),
    rateCaps: Object.freeze({
      hourly: intVar(env, 'RATE_CAP_HOURLY', 10_000, 1, 1_000_000_000),
      perSecond: intVar(env, 'RATE_CAP_PER_SECOND', 100, 1, 1_000_000_000),
    }),
    idempotencyTtlSeconds: intVar(env, 'IDEMPOTENCY_TTL_SECONDS', 86_400, 60, 30 * 86_400),
    bodyLimitBytes: intVar(env, 'BODY_LIMIT_BYTES', 64 * 1024, 1024, 10 * 1024 * 1024),
    metadataLimitBytes: intVar(env, 'METADATA_LIMIT_BYTES', 16 * 1024, 2, 10 * 1024 * 1024),
    routing: loadRoutingConfig(env),
  };
  if (config.metadataLimitBytes >= config.bodyLimitBytes) {
    throw new ConfigError('METADATA_LIMIT_BYTES', `must be smaller than BODY_LIMIT_BYTES (${config.bodyLimitBytes})`);
  }
  return Object.freeze(config);
}
