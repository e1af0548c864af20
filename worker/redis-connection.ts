import { readFileSync } from 'node:fs';
import type { RedisOptions } from 'ioredis';
import { ConfigError, optionalString, type Env } from '../lib/env.ts';

/**
 * Where the session store is and how to reach it: one Redis (`REDIS_URL`), or a Redis that
 * Sentinel fails over (`REDIS_SENTINELS`), with ACL user, password and TLS either way.
 * `redisSettings(env)` is pure (config time); `redisClientOptions` turns the settings into ioredis
 * options at the edge, where a CA file is read. Docs: docs/worker.md, "Session store".
 */
export interface RedisSentinelSettings {
  hosts: Array<{ host: string; port: number }>;
  /** The monitored master's name (`sentinel monitor <name> ...`). */
  masterName: string;
  username: string | undefined;
  password: string | undefined;
  /** TLS to the Sentinels themselves (the master's TLS follows `rediss://`). */
  tls: boolean;
}

export interface RedisSettings {
  /** redis:// or rediss://; with Sentinel only its user, password, database and scheme apply. */
  url: string;
  username: string | undefined;
  password: string | undefined;
  /** A PEM bundle trusted for the servers' certificates (a private CA), besides the system's. */
  tlsCaFile: string | undefined;
  sentinel: RedisSentinelSettings | null;
}

function hostPort(entry: string, variable: string): { host: string; port: number } {
  // host:port, or [v6]:port; the port defaults to Sentinel's 26379.
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+))(?::(\d{1,5}))?$/.exec(entry.trim());
  const port = Number(match?.[3] ?? 26379);
  if (!match || port < 1 || port > 65535)
    throw new ConfigError(variable, `'${entry}' is not host:port (for example redis-sentinel-0.redis:26379)`);
  return { host: (match[1] ?? match[2])!, port };
}

export function redisSettings(env: Env, url: string): RedisSettings {
  const sentinelList = optionalString(env, 'REDIS_SENTINELS');
  const sentinelTls = optionalString(env, 'REDIS_SENTINEL_TLS') ?? 'false';
  if (sentinelTls !== 'true' && sentinelTls !== 'false') throw new ConfigError('REDIS_SENTINEL_TLS', 'must be true or false');
  const sentinel = sentinelList
    ? {
        hosts: sentinelList
          .split(',')
          .filter((s) => s.trim() !== '')
          .map((s) => hostPort(s, 'REDIS_SENTINELS')),
        masterName: optionalString(env, 'REDIS_SENTINEL_MASTER') ?? 'mymaster',
        username: optionalString(env, 'REDIS_SENTINEL_USERNAME'),
        password: optionalString(env, 'REDIS_SENTINEL_PASSWORD'),
        tls: sentinelTls === 'true',
      }
    : null;
  if (sentinel && sentinel.hosts.length === 0) throw new ConfigError('REDIS_SENTINELS', 'lists no Sentinel (host:port, comma-separated)');
  return {
    url,
    username: optionalString(env, 'REDIS_USERNAME'),
    password: optionalString(env, 'REDIS_PASSWORD'),
    tlsCaFile: optionalString(env, 'REDIS_TLS_CA_FILE'),
    sentinel,
  };
}

/** The parts of REDIS_URL a connection uses: host and port (standalone), credentials, database, TLS. */
function fromUrl(url: string): { host: string; port: number; username?: string; password?: string; db: number; tls: boolean } {
  const parsed = new URL(url);
  const db = parsed.pathname.length > 1 ? Number(parsed.pathname.slice(1)) : 0;
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1',
    port: parsed.port ? Number(parsed.port) : 6379,
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    db: Number.isInteger(db) ? db : 0,
    tls: parsed.protocol === 'rediss:',
  };
}

/**
 * ioredis options for one connection of the worker. `base` carries the worker's own timeouts and
 * retry policy. A replica promoted by Sentinel is found through the Sentinels on every reconnect;
 * a connection left on a demoted master (READONLY) reconnects at once instead of failing writes.
 */
export function redisClientOptions(
  settings: RedisSettings,
  base: RedisOptions,
  readFile: (path: string) => Buffer = readFileSync,
): RedisOptions {
  const url = fromUrl(settings.url);
  const ca = settings.tlsCaFile ? readFile(settings.tlsCaFile) : undefined;
  const tls = url.tls ? { ...(ca ? { ca } : {}), ...(settings.sentinel ? {} : { servername: url.host }) } : undefined;
  const username = settings.username ?? url.username;
  const password = settings.password ?? url.password;
  const common: RedisOptions = {
    ...base,
    db: url.db,
    ...(username ? { username } : {}),
    ...(password ? { password } : {}),
    ...(tls ? { tls } : {}),
    reconnectOnError: (err) => err.message.startsWith('READONLY'),
  };
  if (!settings.sentinel) return { ...common, host: url.host, port: url.port };
  const s = settings.sentinel;
  return {
    ...common,
    sentinels: s.hosts,
    name: s.masterName,
    ...(s.username ? { sentinelUsername: s.username } : {}),
    ...(s.password ? { sentinelPassword: s.password } : {}),
    ...(s.tls ? { sentinelTLS: ca ? { ca } : {} } : {}),
    enableTLSForSentinelMode: url.tls,
    // Sentinel's +switch-master moves the connection to the new master without waiting for the old one to drop.
    failoverDetector: true,
    sentinelRetryStrategy: (attempt: number) => Math.min(100 * attempt, 1000),
  };
}
