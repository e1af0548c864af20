import { describe, expect, it } from 'vitest';
import { TokenBucket } from './rate-limit.ts';

describe('TokenBucket', () => {
  it('lets a burst through, then spaces requests at the QPS', () => {
    let t = 0;
    const bucket = new TokenBucket({ qps: 10, burst: 3, now: () => t });
    expect([bucket.reserve(), bucket.reserve(), bucket.reserve()]).toEqual([0, 0, 0]);
    expect(bucket.reserve()).toBeCloseTo(100);
    expect(bucket.reserve()).toBeCloseTo(200);
    t = 1000; // a second later the bucket has refilled (up to its burst)
    expect(bucket.reserve()).toBe(0);
  });

  it('makes callers wait for real', async () => {
    const bucket = new TokenBucket({ qps: 20, burst: 1 });
    const start = performance.now();
    await Promise.all(Array.from({ length: 5 }, () => bucket.take()));
    expect(performance.now() - start).toBeGreaterThanOrEqual(190);
  });

  it('tryTake takes only a token that is there, never one ahead', () => {
    let t = 0;
    const bucket = new TokenBucket({ qps: 10, burst: 2, now: () => t });
    expect([bucket.tryTake(), bucket.tryTake(), bucket.tryTake()]).toEqual([true, true, false]);
    t = 50; // half a token
    expect(bucket.tryTake()).toBe(false);
    t = 100;
    expect(bucket.tryTake()).toBe(true);
  });

  it('refuses a bucket that could never let a request through', () => {
    expect(() => new TokenBucket({ qps: 0, burst: 1 })).toThrow(/qps > 0/);
  });
});
