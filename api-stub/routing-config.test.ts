import { describe, expect, it } from 'vitest';
import { loadRoutingConfig } from './routing-config.ts';

describe('loadRoutingConfig', () => {
  it('has the spec defaults: 10 s spawn budget, 8 s webhook timeout, no retries unless opted in', () => {
    const c = loadRoutingConfig({});
    expect(c).toMatchObject({ hostedPipelineUrl: null, spawnTimeoutMs: 10_000, webhookTimeoutMs: 8_000, sweepIntervalMs: 30_000 });
    expect(c.egressAllowHosts.size).toBe(0);
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('reads and validates every variable, naming it', () => {
    const c = loadRoutingConfig({
      HOSTED_PIPELINE_URL: 'https://pipeline.example.com/spawn',
      HOSTED_PIPELINE_KEY: 'k',
      EGRESS_ALLOW_HOSTS: ' 127.0.0.1, LocalHost ,[::1]',
      SPAWN_TIMEOUT_MS: '1500',
    });
    expect(c.hostedPipelineUrl).toBe('https://pipeline.example.com/spawn');
    expect([...c.egressAllowHosts]).toEqual(['127.0.0.1', 'localhost', '::1']);
    expect(c.spawnTimeoutMs).toBe(1500);
    expect(() => loadRoutingConfig({ HOSTED_PIPELINE_URL: 'http://pipeline.example.com/' })).toThrow(
      /^HOSTED_PIPELINE_URL: must be a URL with scheme https, got "http:"$/,
    );
    expect(() => loadRoutingConfig({ HOSTED_PIPELINE_URL: 'https://pipeline.example.com/' })).toThrow(/^HOSTED_PIPELINE_KEY: required/);
    expect(() => loadRoutingConfig({ SPAWN_TIMEOUT_MS: 'ten' })).toThrow(/^SPAWN_TIMEOUT_MS: expected an integer/);
    expect(() => loadRoutingConfig({ WEBHOOK_TIMEOUT_MS: '999999' })).toThrow(/^WEBHOOK_TIMEOUT_MS: expected an integer from 50/);
    expect(() => loadRoutingConfig({ WEBHOOK_RETRY_SCHEDULE: 'x' })).toThrow(/^WEBHOOK_RETRY_SCHEDULE/);
  });
});
