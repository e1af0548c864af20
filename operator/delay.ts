/**
 * Node's timers hold a signed 32-bit millisecond count: a longer delay (24.8 days) fires after 1 ms
 * instead, with only a warning. Every delay the operator schedules goes through `clampDelay`.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A delay safe to give setTimeout/setInterval: finite, at least 0, at most MAX_TIMER_MS. */
export function clampDelay(ms: number): number {
  if (Number.isNaN(ms) || ms <= 0) return 0;
  return Math.min(ms, MAX_TIMER_MS);
}
