import { describe, expect, it } from 'vitest';
import { ConfigError } from '../lib/env.ts';
import { redisClientOptions, redisSettings } from './redis-connection.ts';

const base = { commandTimeout: 1000, enableOfflineQueue: false };

describe('redisSettings', () => {
  it('is a single Redis unless REDIS_SENTINELS is set', () => {
    expect(redisSettings({}, 'redis://127.0.0.1:6379').sentinel).toBeNull();
  });

  it('reads the Sentinels, the master name and their credentials', () => {
    const s = redisSettings(
      {
        REDIS_SENTINELS: 'sentinel-0.redis:26379, sentinel-1.redis ,[::1]:26380',
        REDIS_SENTINEL_MASTER: 'voice',
        REDIS_SENTINEL_PASSWORD: 'sentinel-secret',
        REDIS_SENTINEL_TLS: 'true',
      },
      'redis://x:6379',
    );
    expect(s.sentinel).toEqual({
      hosts: [
        { host: 'sentinel-0.redis', port: 26379 },
        { host: 'sentinel-1.redis', port: 26379 },
        { host: '::1', port: 26380 },
      ],
      masterName: 'voice',
      username: undefined,
      password: 'sentinel-secret',
      tls: true,
    });
  });

  it('names the variable of a bad value', () => {
    expect(() => redisSettings({ REDIS_SENTINELS: 'host:99999' }, 'redis://x')).toThrow(ConfigError);
    expect(() => redisSettings({ REDIS_SENTINELS: 'host:99999' }, 'redis://x')).toThrow(/REDIS_SENTINELS/);
    expect(() => redisSettings({ REDIS_SENTINELS: ' , ' }, 'redis://x')).toThrow(/REDIS_SENTINELS/);
    expect(() => redisSettings({ REDIS_SENTINELS: 'a', REDIS_SENTINEL_TLS: 'yes' }, 'redis://x')).toThrow(/REDIS_SENTINEL_TLS/);
  });
});

describe('redisClientOptions', () => {
  it('connects a single Redis with the URL credentials, database and TLS', () => {
    const o = redisClientOptions(redisSettings({}, 'rediss://worker:p%40ss@redis.example:6380/2'), base);
    expect(o).toMatchObject({
      host: 'redis.example',
      port: 6380,
      db: 2,
      username: 'worker',
      password: 'p@ss',
      tls: { servername: 'redis.example' },
      commandTimeout: 1000,
    });
    expect(o.sentinels).toBeUndefined();
  });

  it('lets REDIS_USERNAME/REDIS_PASSWORD (from a Secret) win over the URL and trusts REDIS_TLS_CA_FILE', () => {
    const settings = redisSettings(
      { REDIS_USERNAME: 'acl-user', REDIS_PASSWORD: 'from-secret', REDIS_TLS_CA_FILE: '/ca.pem' },
      'rediss://old:old@r:6379',
    );
    const o = redisClientOptions(settings, base, (path) => Buffer.from(`pem at ${path}`));
    expect(o).toMatchObject({ username: 'acl-user', password: 'from-secret' });
    expect((o.tls as { ca: Buffer }).ca.toString()).toBe('pem at /ca.pem');
  });

  it('asks the Sentinels for the master, with TLS to both when asked', () => {
    const settings = redisSettings(
      { REDIS_SENTINELS: 's0:26379', REDIS_SENTINEL_MASTER: 'voice', REDIS_SENTINEL_TLS: 'true', REDIS_PASSWORD: 'master-secret' },
      'rediss://ignored:6379',
    );
    const o = redisClientOptions(settings, base, () => Buffer.from('ca'));
    expect(o).toMatchObject({
      sentinels: [{ host: 's0', port: 26379 }],
      name: 'voice',
      password: 'master-secret',
      enableTLSForSentinelMode: true,
      sentinelTLS: {},
      failoverDetector: true,
    });
    expect(o.host).toBeUndefined();
  });

  it('reconnects a connection left on a demoted master instead of failing its writes', () => {
    const o = redisClientOptions(redisSettings({}, 'redis://r:6379'), base);
    const decide = o.reconnectOnError as (err: Error) => boolean;
    expect(decide(new Error("READONLY You can't write against a read only replica."))).toBe(true);
    expect(decide(new Error('ERR unknown command'))).toBe(false);
  });
});
