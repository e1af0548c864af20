/**
 * Rate caps per workspace (spec section 8), pure: given the two fixed-window counters, decide and
 * build the headers. Two policies, both counting every authenticated session API call together:
 * - "hourly": at most `hourly` calls per clock hour (the spec's hourly cap);
 * - "burst":  at most `perSecond` calls per clock second (our reading of the "service cap").
 * Headers follow draft-ietf-httpapi-ratelimit-headers-10 (structured-field lists):
 *   RateLimit-Policy: "hourly";q=10000;w=3600, "burst";q=100;w=1
 *   RateLimit: "hourly";r=9997;t=1512, "burst";r=99;t=1
 * and a 429 also carries `Retry-After: <seconds>` (RFC 9110).
 */
export interface RateCaps {
  hourly: number;
  perSecond: number;
}

export type WindowKind = 'hour' | 'second';

export interface WindowSpec {
  kind: WindowKind;
  policy: 'hourly' | 'burst';
  seconds: number;
  quota: number;
}

export function windows(caps: RateCaps): WindowSpec[] {
  return [
    { kind: 'hour', policy: 'hourly', seconds: 3600, quota: caps.hourly },
    { kind: 'second', policy: 'burst', seconds: 1, quota: caps.perSecond },
  ];
}

/** Start (Unix ms) of the fixed window holding `now`. */
export function windowStart(now: number, seconds: number): number {
  const size = seconds * 1000;
  return Math.floor(now / size) * size;
}

/** Whole seconds until the window holding `now` ends; at least 1. */
export function secondsToReset(now: number, seconds: number): number {
  return Math.max(1, Math.ceil((windowStart(now, seconds) + seconds * 1000 - now) / 1000));
}

export interface WindowUse {
  spec: WindowSpec;
  /** Calls counted in the current window before this one. */
  used: number;
}

export type RateDecision =
  | { allowed: true; headers: Record<string, string> }
  | { allowed: false; policy: 'hourly' | 'burst'; retryAfterSeconds: number; headers: Record<string, string> };

export function policyHeader(caps: RateCaps): string {
  return windows(caps)
    .map((w) => `"${w.policy}";q=${w.quota};w=${w.seconds}`)
    .join(', ');
}

/** Decides one call: allowed when every window still has room (the call itself counts once allowed). */
export function decide(caps: RateCaps, uses: readonly WindowUse[], now: number): RateDecision {
  const exhausted = uses.filter((u) => u.used >= u.spec.quota);
  const remainingAfter = (u: WindowUse): number => Math.max(0, u.spec.quota - u.used - (exhausted.length === 0 ? 1 : 0));
  const headers: Record<string, string> = {
    'RateLimit-Policy': policyHeader(caps),
    RateLimit: uses.map((u) => `"${u.spec.policy}";r=${remainingAfter(u)};t=${secondsToReset(now, u.spec.seconds)}`).join(', '),
  };
  if (exhausted.length === 0) return { allowed: true, headers };
  // Wait for the latest reset among exhausted windows: retrying earlier is refused again.
  const worst = exhausted.reduce((a, b) => (secondsToReset(now, a.spec.seconds) >= secondsToReset(now, b.spec.seconds) ? a : b));
  const retryAfterSeconds = secondsToReset(now, worst.spec.seconds);
  return {
    allowed: false,
    policy: worst.spec.policy,
    retryAfterSeconds,
    headers: { ...headers, 'Retry-After': String(retryAfterSeconds) },
  };
}
