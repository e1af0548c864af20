import { describe, expect, it } from 'vitest';
import { isoSeconds, unixSeconds } from './time.ts';
import { hasIdForm, newId } from './ids.ts';

describe('isoSeconds', () => {
  it('formats UTC with second precision and a Z suffix, truncating milliseconds', () => {
    expect(isoSeconds(Date.UTC(2026, 10, 23, 1, 2, 3, 999))).toBe('2026-11-23T01:02:03Z');
    expect(unixSeconds(1_700_000_000_999)).toBe(1_700_000_000);
  });
});

describe('newId', () => {
  it('makes prefixed ids that are unique and of the spec form', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => newId('inv')));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(hasIdForm(id, 'inv')).toBe(true);
    expect(hasIdForm('dpl_abc', 'inv')).toBe(false);
    expect(hasIdForm('inv_', 'inv')).toBe(false);
  });
});
