/** ISO 8601 UTC with second precision and a `Z` suffix, as the spec's timestamps are. */
export function isoSeconds(date: Date | number): string {
  const ms = typeof date === 'number' ? date : date.getTime();
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** Unix time in whole seconds. */
export function unixSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}

/** A clock that callers pass in, so that time is a dependency and tests can move it. */
export type Clock = () => number;
export const systemClock: Clock = () => Date.now();
