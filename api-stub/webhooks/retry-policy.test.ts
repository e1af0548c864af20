import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_SCHEDULE_MS, isRetryable, parseRetrySchedule, retryDelay } from './retry-policy.ts';

describe('retry policy', () => {
  it('parses schedules with units and names the variable on errors', () => {
    expect(parseRetrySchedule('5s,30s,2m,1h,250')).toEqual([5_000, 30_000, 120_000, 3_600_000, 250]);
    expect(parseRetrySchedule(undefined)).toBe(DEFAULT_RETRY_SCHEDULE_MS);
    expect(() => parseRetrySchedule('5s,soon')).toThrow(/^WEBHOOK_RETRY_SCHEDULE: expected a comma list/);
    expect(() => parseRetrySchedule('0')).toThrow(/from 1 ms to 7 days/);
  });

  it('the default schedule grows at least doubling each step', () => {
    for (let i = 1; i < DEFAULT_RETRY_SCHEDULE_MS.length; i += 1)
      expect(DEFAULT_RETRY_SCHEDULE_MS[i]!).toBeGreaterThanOrEqual(2 * DEFAULT_RETRY_SCHEDULE_MS[i - 1]!);
  });

  it('jitters each delay within ±20 % and stops when the schedule is spent', () => {
    const schedule = [1_000, 4_000];
    expect(retryDelay(2, schedule, () => 0)).toBe(800);
    expect(retryDelay(2, schedule, () => 1)).toBe(1_200);
    expect(retryDelay(3, schedule, () => 0.5)).toBe(4_000);
    expect(retryDelay(4, schedule, () => 0.5)).toBeNull();
    const samples = Array.from({ length: 200 }, () => retryDelay(2, schedule)!);
    expect(Math.min(...samples)).toBeGreaterThanOrEqual(800);
    expect(Math.max(...samples)).toBeLessThanOrEqual(1_200);
    expect(new Set(samples).size).toBeGreaterThan(50);
  });

  it('retries no answer, 408, 429 and 5xx; not other 4xx or configuration errors', () => {
    for (const failure of ['timeout', 'refused', 'network', 'tls', 'dns', 'egress_refused'])
      expect(isRetryable({ statusCode: null, failure })).toBe(true);
    for (const failure of ['invalid_url', 'https_required']) expect(isRetryable({ statusCode: null, failure })).toBe(false);
    for (const s of [408, 429, 500, 502, 503, 504]) expect(isRetryable({ statusCode: s, failure: null })).toBe(true);
    for (const s of [400, 401, 403, 404, 410, 422]) expect(isRetryable({ statusCode: s, failure: null })).toBe(false);
  });
});
