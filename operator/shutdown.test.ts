import { describe, expect, it } from 'vitest';
import { silentLogger } from '../lib/log.ts';
import { stopWithin } from './shutdown.ts';

describe('stopWithin', () => {
  it('returns once the stop finishes', async () => {
    let done = false;
    const result = await stopWithin(
      async () => {
        await Promise.resolve();
        done = true;
      },
      60_000,
      silentLogger,
    );
    expect(result).toBe('stopped');
    expect(done).toBe(true);
  });

  it('gives up on a stop that never finishes (an API server that does not answer)', async () => {
    const started = performance.now();
    const result = await stopWithin(() => new Promise<void>(() => undefined), 50, silentLogger);
    expect(result).toBe('timed-out');
    expect(performance.now() - started).toBeLessThan(30_000);
  });

  it('counts a stop that fails as finished (the process exits either way)', async () => {
    expect(await stopWithin(() => Promise.reject(new Error('boom')), 60_000, silentLogger)).toBe('stopped');
  });
});
