import { describe, expect, it } from 'vitest';
import { createSpawnLimiter } from './spawn-limiter.ts';

describe('per-workspace spawn limiter', () => {
  it('caps each workspace separately and frees slots on release (once)', () => {
    const limiter = createSpawnLimiter(2);
    const a1 = limiter.tryAcquire('ws_a');
    const a2 = limiter.tryAcquire('ws_a');
    expect(a1).not.toBeNull();
    expect(a2).not.toBeNull();
    expect(limiter.tryAcquire('ws_a')).toBeNull();
    expect(limiter.tryAcquire('ws_b')).not.toBeNull();
    a1!();
    a1!();
    expect(limiter.inFlight('ws_a')).toBe(1);
    expect(limiter.tryAcquire('ws_a')).not.toBeNull();
    expect(limiter.tryAcquire('ws_a')).toBeNull();
  });
});
