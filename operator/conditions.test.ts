import { describe, expect, it } from 'vitest';
import { blockedConditions, healthConditions, mergeConditions } from './conditions.ts';

describe('conditions', () => {
  const t0 = new Date('2030-01-01T00:00:00.123Z');
  const t1 = new Date('2030-01-01T00:05:00Z');

  it('say not Ready and Progressing while workers start, Ready when all are ready', () => {
    expect(healthConditions('p', 1, 3, 3).map((c) => [c.type, c.status, c.reason])).toEqual([
      ['Ready', 'False', 'ReplicasNotReady'],
      ['Progressing', 'True', 'RollingOut'],
      ['Degraded', 'False', 'AsExpected'],
    ]);
    expect(healthConditions('p', 3, 3, 3).map((c) => c.status)).toEqual(['True', 'False', 'False']);
    expect(healthConditions('p', 0, 0, 0)[0]!.status).toBe('False');
  });

  it('keep lastTransitionTime while a status holds and move it when it flips', () => {
    const first = mergeConditions(undefined, healthConditions('p', 0, 2, 0), 1, t0);
    expect(first[0]).toMatchObject({ lastTransitionTime: '2030-01-01T00:00:00Z', observedGeneration: 1 });
    const same = mergeConditions(first, healthConditions('p', 1, 2, 1), 2, t1);
    expect(same[0]).toMatchObject({ lastTransitionTime: '2030-01-01T00:00:00Z', observedGeneration: 2 });
    const flipped = mergeConditions(same, healthConditions('p', 2, 2, 2), 2, t1);
    expect(flipped[0]).toMatchObject({ status: 'True', lastTransitionTime: '2030-01-01T00:05:00Z' });
  });

  it('put the cause of a blocked pool in Degraded and in the others', () => {
    const c = blockedConditions('SecretNotFound', 'Secret ns/x does not exist');
    expect(c.find((x) => x.type === 'Degraded')).toMatchObject({ status: 'True', reason: 'SecretNotFound', message: 'Secret ns/x does not exist' });
    expect(c.find((x) => x.type === 'Ready')).toMatchObject({ status: 'False', reason: 'Blocked' });
  });
});
