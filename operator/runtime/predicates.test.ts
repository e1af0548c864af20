import { describe, expect, it } from 'vitest';
import { fingerprintChanged, generationChanged } from './predicates.ts';

describe('generationChanged (GenerationChangedPredicate)', () => {
  it('lets creations, deletions and spec changes through, and drops updates that keep the generation (status writes)', () => {
    const pass = generationChanged<{ metadata: { generation?: number } }>();
    const at = (generation: number) => ({ metadata: { generation } });
    expect(pass('ADDED', 'ns/a', at(1))).toBe(true);
    expect(pass('MODIFIED', 'ns/a', at(1))).toBe(false);
    expect(pass('MODIFIED', 'ns/a', at(2))).toBe(true);
    expect(pass('MODIFIED', 'ns/b', at(2))).toBe(true); // another key has its own memory
    expect(pass('DELETED', 'ns/a', at(2))).toBe(true);
    expect(pass('MODIFIED', 'ns/a', at(2))).toBe(true); // forgotten with the deletion
  });
});

describe('fingerprintChanged', () => {
  it('drops an update whose fingerprint is unchanged (an HPA reporting its metrics)', () => {
    const pass = fingerprintChanged((o: { spec: number; status: number }) => String(o.spec));
    expect(pass('ADDED', 'k', { spec: 1, status: 0 })).toBe(true);
    expect(pass('MODIFIED', 'k', { spec: 1, status: 5 })).toBe(false);
    expect(pass('MODIFIED', 'k', { spec: 2, status: 5 })).toBe(true);
  });
});
