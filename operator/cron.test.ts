import { describe, expect, it } from 'vitest';
import { occurrences, parseCron, zonedInstant } from './cron.ts';
import { decideFloor, scheduleWindows } from './floor.ts';
import type { VoiceWorkerPoolSpec } from './types.ts';

const first = (cron: string, tz: string, from: string, n = 1) => {
  const out: string[] = [];
  for (const t of occurrences(parseCron(cron), tz, Date.parse(from))) {
    out.push(new Date(t).toISOString());
    if (out.length === n) break;
  }
  return out;
};

describe('cron in a time zone', () => {
  it('parses lists, ranges, steps and Sunday as 0 or 7, and names what is wrong', () => {
    expect([...parseCron('*/15 9-17 * * 1-5').minutes]).toEqual([0, 15, 30, 45]);
    expect([...parseCron('0 9 * * 7').weekdays]).toEqual([0]);
    expect(() => parseCron('0 25 * * *')).toThrow('cron hour "25" is outside 0-23');
    expect(() => parseCron('0 9 * *')).toThrow(/five fields/);
    expect(() => parseCron('0 9 * * MON')).toThrow(/day of week "MON"/);
  });

  it('fires at the wall time in the zone, across the spring and autumn changes', () => {
    // Berlin: UTC+1 in winter, UTC+2 from 2030-03-31.
    expect(first('0 9 * * *', 'Europe/Berlin', '2030-03-29T00:00:00Z', 4)).toEqual([
      '2030-03-29T08:00:00.000Z',
      '2030-03-30T08:00:00.000Z',
      '2030-03-31T07:00:00.000Z',
      '2030-04-01T07:00:00.000Z',
    ]);
    expect(first('0 9 * * *', 'America/New_York', '2030-11-02T00:00:00Z', 2)).toEqual([
      '2030-11-02T13:00:00.000Z',
      '2030-11-03T14:00:00.000Z',
    ]);
  });

  it('moves a skipped wall time past the jump and fires a repeated one once', () => {
    // 2030-03-31 02:30 does not exist in Berlin (02:00 -> 03:00): it fires at 03:30 local (01:30Z).
    expect(new Date(zonedInstant(2030, 3, 31, 2, 30, 'Europe/Berlin')).toISOString()).toBe('2030-03-31T01:30:00.000Z');
    // 2030-10-27 02:30 happens twice (03:00 -> 02:00): the first, still in summer time (00:30Z).
    expect(first('30 2 27 10 *', 'Europe/Berlin', '2030-10-27T00:00:00Z', 2)).toEqual([
      '2030-10-27T00:30:00.000Z',
      '2031-10-27T01:30:00.000Z',
    ]);
  });

  it('honours day-of-month OR day-of-week when both are given, as cron does', () => {
    expect(first('0 0 1 * 1', 'UTC', '2030-01-02T00:00:00Z', 2)).toEqual(['2030-01-07T00:00:00.000Z', '2030-01-14T00:00:00.000Z']);
  });
});

describe('recurring pre-scaling', () => {
  const spec = (extra: Partial<VoiceWorkerPoolSpec>): VoiceWorkerPoolSpec => ({ replicas: 2, ...extra }) as VoiceWorkerPoolSpec;
  const schedule = { name: 'mornings', cron: '0 9 * * 1-5', timeZone: 'Europe/Berlin', durationMinutes: 120, replicas: 8 };

  it('raises the floor lead seconds before each start, lowers it at the end, and names the next boundary', () => {
    const s = spec({ preScaling: { leadSeconds: 300, windows: [], schedules: [schedule] } });
    // Monday 2030-04-01, Berlin summer time: 09:00 local = 07:00Z, raised at 06:55Z.
    expect(decideFloor(s, new Date('2030-04-01T06:50:00Z'))).toMatchObject({ floor: 2, requeueAt: new Date('2030-04-01T06:55:00Z') });
    expect(decideFloor(s, new Date('2030-04-01T06:55:00Z'))).toMatchObject({
      floor: 8,
      windows: ['mornings'],
      requeueAt: new Date('2030-04-01T09:00:00Z'),
    });
    expect(decideFloor(s, new Date('2030-04-01T09:00:00Z'))).toMatchObject({ floor: 2, requeueAt: new Date('2030-04-02T06:55:00Z') });
    // Friday evening: the next boundary is Monday's.
    expect(decideFloor(s, new Date('2030-04-05T18:00:00Z')).requeueAt).toEqual(new Date('2030-04-08T06:55:00Z'));
  });

  it('ignores one-off windows that ended', () => {
    const s = spec({
      preScaling: {
        leadSeconds: 300,
        windows: [{ name: 'old', start: '2020-01-01T00:00:00Z', end: '2020-01-02T00:00:00Z', replicas: 900 }],
      },
    });
    expect(decideFloor(s, new Date('2030-01-01T00:00:00Z'))).toMatchObject({ floor: 2, windows: [] });
    expect(decideFloor(s, new Date('2030-01-01T00:00:00Z')).requeueAt).toBeUndefined();
  });

  it('leaves a schedule that does not parse out of the floor (validation reports it)', () => {
    expect(scheduleWindows([{ ...schedule, timeZone: 'Mars/Olympus' }], 0, new Date())).toEqual([]);
  });
});
