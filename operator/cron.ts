/**
 * Five-field cron expressions (minute hour day-of-month month day-of-week) evaluated as wall-clock
 * times in an IANA time zone, as CronJob's `timeZone` and KEDA's cron scaler do. Pure.
 *
 * DST (decision, documented in docs/operator.md): a wall time that does not exist (the hour skipped
 * in spring) fires at the same distance after the jump (02:30 becomes 03:30); a wall time that exists
 * twice (the hour repeated in autumn) fires once, at its first occurrence.
 */
export interface CronFields {
  minutes: Set<number>;
  hours: Set<number>;
  days: Set<number>;
  months: Set<number>;
  weekdays: Set<number>;
  /** Cron's rule: with both day fields restricted, a day matches when either matches. */
  anyDay: boolean;
}

const RANGES: Array<[number, number]> = [
  [0, 59],
  [0, 23],
  [1, 31],
  [1, 12],
  [0, 7],
];
const FIELD_NAMES = ['minute', 'hour', 'day of month', 'month', 'day of week'];

function parseField(text: string, index: number): Set<number> {
  const [lo, hi] = RANGES[index]!;
  const out = new Set<number>();
  for (const part of text.split(',')) {
    const m = /^(\*|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(part);
    if (!m) throw new Error(`cron ${FIELD_NAMES[index]} "${part}" is not a number, range, list or step`);
    const start = m[1] === '*' ? lo : Number(m[2]);
    const end = m[1] === '*' ? hi : m[3] !== undefined ? Number(m[3]) : m[4] !== undefined ? hi : start;
    const step = m[4] !== undefined ? Number(m[4]) : 1;
    if (start < lo || end > hi || start > end || step < 1) throw new Error(`cron ${FIELD_NAMES[index]} "${part}" is outside ${lo}-${hi}`);
    for (let v = start; v <= end; v += step) out.add(index === 4 && v === 7 ? 0 : v);
  }
  return out;
}

export function parseCron(expression: string): CronFields {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5) throw new Error(`cron "${expression}" needs five fields (minute hour day-of-month month day-of-week)`);
  const [minutes, hours, days, months, weekdays] = parts.map(parseField) as [
    Set<number>,
    Set<number>,
    Set<number>,
    Set<number>,
    Set<number>,
  ];
  return { minutes, hours, days, months, weekdays, anyDay: parts[2] !== '*' && parts[4] !== '*' };
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** Throws a RangeError for a zone the runtime does not know. */
export function wallClock(instant: number, timeZone: string): { y: number; mo: number; d: number; h: number; mi: number } {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  const p = Object.fromEntries(f.formatToParts(new Date(instant)).map((x) => [x.type, Number(x.value)]));
  return { y: p.year!, mo: p.month!, d: p.day!, h: p.hour!, mi: p.minute! };
}

const offsetAt = (instant: number, timeZone: string): number => {
  const w = wallClock(instant, timeZone);
  return Date.UTC(w.y, w.mo - 1, w.d, w.h, w.mi) - Math.floor(instant / 60_000) * 60_000;
};

/** The instant of a wall time in a zone (see the DST rules above). */
export function zonedInstant(y: number, mo: number, d: number, h: number, mi: number, timeZone: string): number {
  const wall = Date.UTC(y, mo - 1, d, h, mi);
  const before = offsetAt(wall - 43_200_000, timeZone);
  const after = offsetAt(wall + 43_200_000, timeZone);
  const valid = [...new Set([before, after])]
    .map((o) => wall - o)
    .filter((t) => offsetAt(t, timeZone) === wall - t)
    .sort((a, b) => a - b);
  return valid[0] ?? wall - before; // in the gap: the offset before the jump lands after it
}

/** Far enough either side of a day that every wall time of it falls between (offsets reach 14 h). */
const DAY_MARGIN_MS = 36 * 3_600_000;

/**
 * Start instants of the expression, in order, from the local day of `from` on, for at most
 * `maxDays` days. Lazy, and a day whose offset does not change around it costs two offset lookups
 * however many minutes match (a schedule of every minute is 1,440 a day).
 */
export function* occurrences(cron: CronFields, timeZone: string, from: number, maxDays = 400): Generator<number> {
  const first = wallClock(from, timeZone);
  const day = new Date(Date.UTC(first.y, first.mo - 1, first.d));
  const hours = [...cron.hours].sort((a, b) => a - b);
  const minutes = [...cron.minutes].sort((a, b) => a - b);
  for (let i = 0; i < maxDays; i++, day.setUTCDate(day.getUTCDate() + 1)) {
    const y = day.getUTCFullYear();
    const mo = day.getUTCMonth() + 1;
    const d = day.getUTCDate();
    if (!cron.months.has(mo)) continue;
    const domOk = cron.days.has(d);
    const dowOk = cron.weekdays.has(day.getUTCDay());
    if (cron.anyDay ? !(domOk || dowOk) : !(domOk && dowOk)) continue;
    const midnight = day.getTime();
    const offset = offsetAt(midnight - DAY_MARGIN_MS, timeZone);
    // No transition near this day: every wall time is one subtraction away, already in order.
    const steady = offset === offsetAt(midnight + 86_400_000 + DAY_MARGIN_MS, timeZone);
    const starts = new Set<number>();
    for (const h of hours)
      for (const mi of minutes) starts.add(steady ? midnight + (h * 60 + mi) * 60_000 - offset : zonedInstant(y, mo, d, h, mi, timeZone));
    for (const t of steady ? starts : [...starts].sort((a, b) => a - b)) if (t >= from) yield t;
  }
}
