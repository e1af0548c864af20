import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.ts';

describe('loadConfig', () => {
  it('has defaults for everything and is frozen', () => {
    const c = loadConfig({ POD_NAME: 'op-0' });
    expect(c).toMatchObject({ leaseNamespace: 'default', leaseName: 'voice-operator-leader', metricsPort: 8080, resyncMs: 300_000, workers: 4, leaseDurationMs: 15_000 });
    expect(c.identity).toMatch(/^op-0_[0-9a-f]{8}$/);
    expect(c.watchNamespace).toBeUndefined();
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('rejects bad values with a message naming the variable', () => {
    expect(() => loadConfig({ METRICS_PORT: 'eighty' })).toThrow(/METRICS_PORT/);
    expect(() => loadConfig({ WORKERS: '0' })).toThrow(/WORKERS/);
    expect(() => loadConfig({ LEASE_DURATION_SECONDS: '5', RENEW_DEADLINE_SECONDS: '10' })).toThrow(/^RENEW_DEADLINE_SECONDS: must be below LEASE_DURATION_SECONDS \(5\)$/);
    expect(() => loadConfig({ RENEW_DEADLINE_SECONDS: '2', RETRY_PERIOD_SECONDS: '2' })).toThrow(/^RETRY_PERIOD_SECONDS: must be below RENEW_DEADLINE_SECONDS \(2\)$/);
  });
});
