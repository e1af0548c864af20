import { describe, expect, it } from 'vitest';
import { decide, policyHeader, secondsToReset, windows, windowStart } from './policy.ts';

const caps = { hourly: 10, perSecond: 2 };
const uses = (hour: number, second: number) => windows(caps).map((spec) => ({ spec, used: spec.kind === 'hour' ? hour : second }));
const at = Date.parse('2026-11-23T10:59:59.250Z');

describe('rate cap policy', () => {
  it('aligns windows to the clock', () => {
    expect(windowStart(at, 3600)).toBe(Date.parse('2026-11-23T10:00:00Z'));
    expect(windowStart(at, 1)).toBe(Date.parse('2026-11-23T10:59:59Z'));
    expect(secondsToReset(at, 3600)).toBe(1);
    expect(secondsToReset(Date.parse('2026-11-23T10:30:00Z'), 3600)).toBe(1800);
    expect(secondsToReset(Date.parse('2026-11-23T10:30:00Z'), 1)).toBe(1);
  });

  it('allows while every window has room, counting the call itself in the remaining figures', () => {
    const d = decide(caps, uses(3, 1), Date.parse('2026-11-23T10:30:00Z'));
    expect(d.allowed).toBe(true);
    expect(d.headers['RateLimit-Policy']).toBe('"hourly";q=10;w=3600, "burst";q=2;w=1');
    expect(d.headers.RateLimit).toBe('"hourly";r=6;t=1800, "burst";r=0;t=1');
    expect(d.headers['Retry-After']).toBeUndefined();
  });

  it('refuses on the burst cap with Retry-After 1', () => {
    const d = decide(caps, uses(3, 2), Date.parse('2026-11-23T10:30:00Z'));
    expect(d).toMatchObject({ allowed: false, policy: 'burst', retryAfterSeconds: 1 });
    expect(d.headers['Retry-After']).toBe('1');
  });

  it('refuses on the hourly cap until the hour ends, even when the burst window also is full', () => {
    const d = decide(caps, uses(10, 2), Date.parse('2026-11-23T10:30:00Z'));
    expect(d).toMatchObject({ allowed: false, policy: 'hourly', retryAfterSeconds: 1800 });
    expect(d.headers.RateLimit).toBe('"hourly";r=0;t=1800, "burst";r=0;t=1');
  });

  it('formats the policy header from the caps', () => {
    expect(policyHeader({ hourly: 5000, perSecond: 25 })).toBe('"hourly";q=5000;w=3600, "burst";q=25;w=1');
  });
});
