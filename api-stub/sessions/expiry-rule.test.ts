import { describe, expect, it } from 'vitest';
import { expiryInstant, isExpiryDue } from './expiry-rule.ts';
import { SESSION_STATUSES } from './state-machine.ts';

describe('expiry rule (C5)', () => {
  const expiresAt = 1_000_000;
  const grace = 86_400_000;

  it('sessions that never started expire at expiresAt', () => {
    for (const status of ['PENDING', 'SENT', 'CLICKED'] as const) {
      expect(isExpiryDue(status, expiresAt, expiresAt - 1, grace)).toBe(false);
      expect(isExpiryDue(status, expiresAt, expiresAt, grace)).toBe(true);
    }
  });

  it('a STARTED session expires only at expiresAt + grace', () => {
    expect(isExpiryDue('STARTED', expiresAt, expiresAt + grace - 1, grace)).toBe(false);
    expect(isExpiryDue('STARTED', expiresAt, expiresAt + grace, grace)).toBe(true);
    expect(isExpiryDue('STARTED', expiresAt, expiresAt, 0)).toBe(true);
  });

  it('terminal sessions never expire again', () => {
    for (const status of SESSION_STATUSES.filter((s) => s === 'COMPLETED' || s === 'EXPIRED')) {
      expect(expiryInstant(status, expiresAt, grace)).toBeNull();
    }
  });
});
