import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.ts';

describe('loadConfig', () => {
  it('has documented defaults and is frozen', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      dbPath: 'api-stub.sqlite',
      seedPath: null,
      publicUrl: null,
      sessionTtlSeconds: 86_400,
      rateCaps: { hourly: 10_000, perSecond: 100 },
      idempotencyTtlSeconds: 86_400,
      bodyLimitBytes: 65_536,
      metadataLimitBytes: 16_384,
      retention: { sessionDays: 30, webhookDays: 30, intervalSeconds: 3600, batchRows: 500 },
    });
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.rateCaps)).toBe(true);
  });

  it('reads every variable', () => {
    const c = loadConfig({
      PORT: '9000',
      HOST: '0.0.0.0',
      API_STUB_DB: '/tmp/x.sqlite',
      API_STUB_SEED: 'seed.json',
      PUBLIC_URL: 'https://app.example.com/',
      SESSION_TTL_SECONDS: '60',
      RATE_CAP_HOURLY: '5',
      RATE_CAP_PER_SECOND: '2',
      BODY_LIMIT_BYTES: '2048',
      METADATA_LIMIT_BYTES: '1024',
    });
    expect(c).toMatchObject({
      port: 9000,
      host: '0.0.0.0',
      dbPath: '/tmp/x.sqlite',
      seedPath: 'seed.json',
      publicUrl: 'https://app.example.com',
      sessionTtlSeconds: 60,
      rateCaps: { hourly: 5, perSecond: 2 },
    });
  });

  it.each([
    [{ PORT: 'abc' }, /^PORT: expected an integer/],
    [{ PORT: '70000' }, /^PORT: expected an integer from 0 to 65535/],
    [{ SESSION_TTL_SECONDS: '0' }, /^SESSION_TTL_SECONDS/],
    [{ RATE_CAP_HOURLY: '1.5' }, /^RATE_CAP_HOURLY/],
    [{ RATE_CAP_PER_SECOND: '-1' }, /^RATE_CAP_PER_SECOND/],
    [{ PUBLIC_URL: 'not a url' }, /^PUBLIC_URL/],
    [{ PUBLIC_URL: 'ftp://x.example' }, /^PUBLIC_URL/],
    [{ PUBLIC_URL: 'https://x.example/?q=1' }, /^PUBLIC_URL/],
    [{ METADATA_LIMIT_BYTES: '70000' }, /^METADATA_LIMIT_BYTES/],
    [{ RETENTION_SESSION_DAYS: '0' }, /^RETENTION_SESSION_DAYS/],
    [{ RETENTION_WEBHOOK_DAYS: 'x' }, /^RETENTION_WEBHOOK_DAYS/],
    [{ RETENTION_INTERVAL_SECONDS: '0' }, /^RETENTION_INTERVAL_SECONDS/],
  ])('names the variable in the error for %j', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });
});
