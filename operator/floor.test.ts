import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { activeWindows, decideFloor, nextBoundary, sizingFloor } from './floor.ts';
import type { VoiceWorkerPoolSpec } from './types.ts';

const spec = (extra: Partial<VoiceWorkerPoolSpec>): VoiceWorkerPoolSpec => ({ replicas: 3, ...extra }) as VoiceWorkerPoolSpec;
const at = (iso: string) => new Date(iso);

describe('sizingFloor', () => {
  it('is ceil(P95 x (1 + headroom) / sessions per replica)', () => {
    expect(sizingFloor({ p95ConcurrentSessions: 10, headroomPercent: 20, sessionsPerReplica: 1 })).toBe(12);
    expect(sizingFloor({ p95ConcurrentSessions: 10, headroomPercent: 20, sessionsPerReplica: 2 })).toBe(6);
    expect(sizingFloor({ p95ConcurrentSessions: 7, headroomPercent: 20, sessionsPerReplica: 4 })).toBe(3); // 8.4 / 4 = 2.1
    expect(sizingFloor({ p95ConcurrentSessions: 0, headroomPercent: 20, sessionsPerReplica: 1 })).toBe(0);
    expect(sizingFloor(undefined)).toBe(0);
  });

  it('matches the formula computed in exact rational arithmetic for any inputs', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 0, max: 500 }),
        fc.integer({ min: 1, max: 1000 }),
        (p95, headroom, per) => {
          const numerator = BigInt(p95) * BigInt(100 + headroom);
          const denominator = BigInt(100 * per);
          const expected = Number((numerator + denominator - 1n) / denominator);
          expect(sizingFloor({ p95ConcurrentSessions: p95, headroomPercent: headroom, sessionsPerReplica: per })).toBe(expected);
        },
      ),
    );
  });
});

describe('pre-scaling windows', () => {
  const windows = [
    { name: 'morning', start: '2030-01-01T09:00:00Z', end: '2030-01-01T10:00:00Z', replicas: 10 },
    { name: 'noon', start: '2030-01-01T12:00:00Z', end: '2030-01-01T13:00:00Z', replicas: 20 },
  ];

  it('counts a window from its lead time before the start until its end', () => {
    expect(activeWindows(windows, 300, at('2030-01-01T08:54:59Z'))).toEqual([]);
    expect(activeWindows(windows, 300, at('2030-01-01T08:55:00Z')).map((w) => w.name)).toEqual(['morning']);
    expect(activeWindows(windows, 300, at('2030-01-01T09:59:59Z')).map((w) => w.name)).toEqual(['morning']);
    expect(activeWindows(windows, 300, at('2030-01-01T10:00:00Z'))).toEqual([]);
  });

  it('names the next boundary: the next raise or the end of the current window', () => {
    expect(nextBoundary(windows, 300, at('2030-01-01T08:00:00Z'))).toEqual(at('2030-01-01T08:55:00Z'));
    expect(nextBoundary(windows, 300, at('2030-01-01T09:30:00Z'))).toEqual(at('2030-01-01T10:00:00Z'));
    expect(nextBoundary(windows, 300, at('2030-01-01T10:30:00Z'))).toEqual(at('2030-01-01T11:55:00Z'));
    expect(nextBoundary(windows, 300, at('2030-01-01T14:00:00Z'))).toBeUndefined();
  });

  it('raises the floor above sizing and the base, and requeues at the boundary', () => {
    const s = spec({
      autoscaling: {
        enabled: true,
        minReplicas: 2,
        maxReplicas: 50,
        targetCPUUtilizationPercentage: 70,
        scaleDown: { stabilizationWindowSeconds: 300, maxPercentPerMinute: 10 },
      },
      sizing: { p95ConcurrentSessions: 10, headroomPercent: 20, sessionsPerReplica: 1 },
      preScaling: { leadSeconds: 300, windows },
    });
    expect(decideFloor(s, at('2030-01-01T08:00:00Z'))).toEqual({
      floor: 12,
      fromSizing: 12,
      windows: [],
      requeueAt: at('2030-01-01T08:55:00Z'),
    });
    expect(decideFloor(s, at('2030-01-01T12:00:00Z'))).toEqual({
      floor: 20,
      fromSizing: 12,
      windows: ['noon'],
      requeueAt: at('2030-01-01T13:00:00Z'),
    });
  });

  it('uses spec.replicas as the base without autoscaling, and minReplicas with it', () => {
    expect(decideFloor(spec({ replicas: 4 }), at('2030-01-01T00:00:00Z')).floor).toBe(4);
    const auto = spec({
      replicas: 4,
      autoscaling: {
        enabled: true,
        minReplicas: 2,
        maxReplicas: 9,
        targetCPUUtilizationPercentage: 70,
        scaleDown: { stabilizationWindowSeconds: 0, maxPercentPerMinute: 10 },
      },
    });
    expect(decideFloor(auto, at('2030-01-01T00:00:00Z')).floor).toBe(2);
  });
});
