/**
 * Whatever a spec the CRD accepts holds, one reconcile's pure part (the floor and the children) is
 * bounded in time and memory, and the lazy schedule windows decide exactly what enumerating every
 * occurrence would.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { poolFixture } from '../test/operator/pool-fixture.ts';
import { occurrences, parseCron, zonedInstant } from './cron.ts';
import { activeWindows, decideFloor, nextBoundary, scheduleWindows } from './floor.ts';
import { desiredState } from './resources/index.ts';
import type { PreScalingSchedule, PreScalingWindow } from './types.ts';

// The CRD's limits (crds/): 20 schedules of at most 10,080 minutes, 50 windows, 32 extraEnv values of
// 8 KiB, 16 tolerations, 32 node selector labels, a lead of at most a day.
const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'Pacific/Chatham'];
const CRONS = [
  '* * * * *',
  '*/5 * * * *',
  '0 9 * * 1-5',
  '30 2 * * *',
  '0 0 29 2 *',
  '0 0 31 * 1',
  '59 23 31 12 *',
  '0,30 1-3 * 3,10,11 0',
];
const instant = fc.integer({ min: Date.parse('2030-01-01T00:00:00Z'), max: Date.parse('2031-12-31T00:00:00Z') });
const schedule = (maxMinutes: number) =>
  fc.record({
    cron: fc.constantFrom(...CRONS),
    timeZone: fc.constantFrom(...ZONES),
    durationMinutes: fc.integer({ min: 1, max: maxMinutes }),
    replicas: fc.integer({ min: 1, max: 1000 }),
    name: fc.option(fc.constantFrom('peak', 'night', 'launch'), { nil: undefined }),
  });

/** Every occurrence that started before now + lead and has not ended, plus the next: what the floor used to enumerate. */
function everyWindow(schedules: PreScalingSchedule[], leadSeconds: number, now: number): PreScalingWindow[] {
  const out: PreScalingWindow[] = [];
  for (const s of schedules) {
    const d = s.durationMinutes * 60_000;
    for (const start of occurrences(parseCron(s.cron), s.timeZone, now - d + 1)) {
      out.push({
        name: s.name ?? s.cron,
        start: new Date(start).toISOString(),
        end: new Date(start + d).toISOString(),
        replicas: s.replicas,
      });
      if (start - leadSeconds * 1000 > now) break;
    }
  }
  return out;
}

describe('schedule windows, computed lazily', () => {
  it('raise the same floor, name the same windows and the same next boundary as every occurrence would', () => {
    fc.assert(
      fc.property(
        fc.array(schedule(720), { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 0, max: 3600 }),
        instant,
        (schedules, lead, now) => {
          const at = new Date(now);
          const lazy = scheduleWindows(schedules, lead, at);
          const all = everyWindow(schedules, lead, now);
          const names = (ws: PreScalingWindow[]) => [...new Set(activeWindows(ws, lead, at).map((w) => w.name))].sort();
          const top = (ws: PreScalingWindow[]) => activeWindows(ws, lead, at).reduce((m, w) => Math.max(m, w.replicas), 0);
          expect(names(lazy)).toEqual(names(all));
          expect(top(lazy)).toBe(top(all));
          expect(nextBoundary(lazy, lead, at)).toEqual(nextBoundary(all, lead, at));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('give the same instants on steady days as the exact wall-time conversion, transitions included', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ZONES),
        fc.constantFrom('*/7 * * * *', '30 2 * * *', '0,59 0-23 * * *'),
        instant,
        (zone, cron, from) => {
          const fields = parseCron(cron);
          const got: number[] = [];
          for (const t of occurrences(fields, zone, from)) {
            if (t >= from + 5 * 86_400_000) break;
            got.push(t);
          }
          // The exact conversion of every wall time of the same days, in order and without repeats.
          const expected = new Set<number>();
          const day = new Date(from - 2 * 86_400_000);
          for (let i = 0; i < 10; i++, day.setUTCDate(day.getUTCDate() + 1)) {
            for (const h of fields.hours)
              for (const mi of fields.minutes)
                expected.add(zonedInstant(day.getUTCFullYear(), day.getUTCMonth() + 1, day.getUTCDate(), h, mi, zone));
          }
          const ordered = [...expected].filter((t) => t >= from && t < from + 5 * 86_400_000).sort((a, b) => a - b);
          expect(got).toEqual(ordered);
        },
      ),
      { numRuns: 30 },
    );
  });
});

describe('a hostile but valid spec', () => {
  const hostile = fc.record({
    schedules: fc.array(schedule(10_080), { minLength: 0, maxLength: 20 }),
    windows: fc.array(
      fc.tuple(instant, fc.integer({ min: 1, max: 30 * 86_400 }), fc.integer({ min: 1, max: 1000 })).map(([s, len, replicas]) => ({
        start: new Date(s).toISOString().replace(/\.\d{3}Z$/, 'Z'),
        end: new Date(s + len * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
        replicas,
      })),
      { maxLength: 50 },
    ),
    lead: fc.integer({ min: 0, max: 86_400 }),
    env: fc.integer({ min: 0, max: 32 }),
    tolerations: fc.integer({ min: 0, max: 16 }),
    now: instant,
  });

  it('keeps one reconcile pass bounded: a few windows per schedule, children no larger than the spec allows, well under a second', () => {
    fc.assert(
      fc.property(hostile, ({ schedules, windows, lead, env, tolerations, now }) => {
        const pool = poolFixture({
          preScaling: { leadSeconds: lead, windows, schedules },
          extraEnv: Array.from({ length: env }, (_, i) => ({ name: `E${i}`, value: 'x'.repeat(8192) })),
          placement: {
            tolerations: Array.from({ length: tolerations }, (_, i) => ({ key: `k${i}`, operator: 'Exists', effect: 'NoSchedule' })),
          },
        });
        const started = performance.now();
        const desired = desiredState(pool, new Date(now));
        const elapsed = performance.now() - started;
        // At most two occurrences per schedule, whatever their overlap (a week of every minute is 10,080).
        expect(scheduleWindows(schedules, lead, new Date(now)).length).toBeLessThanOrEqual(2 * schedules.length);
        expect(desired.decision.windows.length).toBeLessThanOrEqual(windows.length + schedules.length);
        // The children carry the spec's values once each, not once per window or per child.
        expect(JSON.stringify(desired.apply).length).toBeLessThan(2 * (env * 8300 + 64 * 1024));
        // A wide bound (a pass takes milliseconds): the old expansion took minutes or blew the stack.
        expect(elapsed).toBeLessThan(2000);
      }),
      { numRuns: 40 },
    );
  });

  it('takes a pool of 20 schedules of every minute for a week in one short pass (it used to overflow the stack)', () => {
    const schedules = Array.from({ length: 20 }, (_, i) => ({
      name: `s${i}`,
      cron: '* * * * *',
      timeZone: ZONES[i % ZONES.length]!,
      durationMinutes: 10_080,
      replicas: 1 + i,
    }));
    const heapBefore = process.memoryUsage().heapUsed;
    const decision = decideFloor(
      poolFixture({ preScaling: { leadSeconds: 300, windows: [], schedules } }).spec,
      new Date('2030-06-01T12:00:30Z'),
    );
    expect(decision.floor).toBe(20);
    expect(decision.windows).toHaveLength(20);
    expect(decision.requeueAt).toEqual(new Date('2030-06-01T12:01:00Z'));
    // Far from the normal figure (a few kB); the expansion held 201,600 windows.
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(64 << 20);
  });
});
