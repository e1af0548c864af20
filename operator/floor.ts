/**
 * The replica floor: how many workers must run now, from the sizing inputs and the scheduled
 * pre-scaling windows. Pure: the clock is passed in.
 */
import { sessionsPerReplica } from './capacity.ts';
import { occurrences, parseCron } from './cron.ts';
import type { PreScalingSchedule, PreScalingWindow, VoiceWorkerPoolSpec } from './types.ts';

export const DEFAULT_LEAD_SECONDS = 300;

/** ceil(P95 x (1 + headroom) / sessions per replica); 0 without sizing inputs. `perReplica`: the resolved value (capacity.ts). */
export function sizingFloor(sizing: VoiceWorkerPoolSpec['sizing'], perReplica = sizing?.sessionsPerReplica ?? 1): number {
  if (!sizing) return 0;
  perReplica = Math.max(1, perReplica);
  // Integer arithmetic in hundredths, so 10 sessions + 20 % is exactly 12, not 12.000000000000002.
  return Math.ceil((sizing.p95ConcurrentSessions * (100 + sizing.headroomPercent)) / (100 * perReplica));
}

/** A window counts from `lead` seconds before its start until its end. */
export function activeWindows(windows: PreScalingWindow[], leadSeconds: number, now: Date): PreScalingWindow[] {
  const t = now.getTime();
  return windows.filter((w) => Date.parse(w.start) - leadSeconds * 1000 <= t && t < Date.parse(w.end));
}

/** The next instant a window is raised or lowered, if any is still ahead. */
export function nextBoundary(windows: PreScalingWindow[], leadSeconds: number, now: Date): Date | undefined {
  const t = now.getTime();
  const instants = windows
    .flatMap((w) => [Date.parse(w.start) - leadSeconds * 1000, Date.parse(w.end)])
    .filter((instant) => Number.isFinite(instant) && instant > t);
  return instants.length === 0 ? undefined : new Date(instants.reduce((a, b) => Math.min(a, b)));
}

const iso = (t: number) => new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * The occurrences of recurring schedules that matter at `now`, as windows: per schedule the first
 * that has not ended (running now if its lead has begun) and, if that one runs, the next one to
 * come. Those two hold every boundary ahead that comes first, so however many occurrences of a
 * schedule overlap now (a schedule of every minute lasting a week has 10,080), the work is two
 * lookups. A schedule that does not parse is left out here and reported by validate.ts.
 */
export function scheduleWindows(schedules: PreScalingSchedule[], leadSeconds: number, now: Date): PreScalingWindow[] {
  const t = now.getTime();
  const lead = leadSeconds * 1000;
  const out: PreScalingWindow[] = [];
  for (const s of schedules) {
    try {
      const cron = parseCron(s.cron);
      const durationMs = s.durationMinutes * 60_000;
      const window = (start: number): PreScalingWindow => ({
        name: s.name ?? s.cron,
        start: iso(start),
        end: iso(start + durationMs),
        replicas: s.replicas,
      });
      const current = occurrences(cron, s.timeZone, t - durationMs + 1).next();
      if (current.done) continue;
      out.push(window(current.value));
      if (current.value - lead > t) continue; // not raised yet: it is the next one
      const next = occurrences(cron, s.timeZone, t + lead + 1).next();
      if (!next.done) out.push(window(next.value));
    } catch {
      continue;
    }
  }
  return out;
}

export interface FloorDecision {
  /** The HPA minimum with autoscaling on; the Deployment's replicas with it off. */
  floor: number;
  /** From sizing alone (before the base replicas and windows). */
  fromSizing: number;
  /** Names (or start times) of the windows that raise the floor now. */
  windows: string[];
  /** When to reconcile again so a window is raised or lowered on time. */
  requeueAt?: Date;
}

export function decideFloor(spec: VoiceWorkerPoolSpec, now: Date): FloorDecision {
  // An explicit autoscaling object brings its own minimum; without one `replicas` is the base (and
  // the default HPA's minimum).
  const base = spec.autoscaling?.enabled ? spec.autoscaling.minReplicas : spec.replicas;
  const fromSizing = sizingFloor(spec.sizing, sessionsPerReplica(spec));
  const lead = spec.preScaling?.leadSeconds ?? DEFAULT_LEAD_SECONDS;
  // One-off windows that ended are ignored (neither active nor a boundary ahead).
  const windows = [...(spec.preScaling?.windows ?? []), ...scheduleWindows(spec.preScaling?.schedules ?? [], lead, now)];
  const active = activeWindows(windows, lead, now);
  const fromWindows = active.reduce((max, w) => Math.max(max, w.replicas), 0);
  const floor = Math.max(base, fromSizing, fromWindows);
  const requeueAt = nextBoundary(windows, lead, now);
  return { floor, fromSizing, windows: [...new Set(active.map((w) => w.name ?? w.start))], ...(requeueAt ? { requeueAt } : {}) };
}
