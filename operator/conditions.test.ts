import { describe, expect, it } from 'vitest';
import { blockedConditions, healthConditions, mergeConditions, transcriptCondition, type RolloutState } from './conditions.ts';

/** A Deployment that finished rolling out `n` workers at generation 1. */
const settled = (n: number, extra: Partial<RolloutState> = {}): RolloutState => ({
  generation: 1,
  observedGeneration: 1,
  replicas: n,
  statusReplicas: n,
  updated: n,
  available: n,
  ready: n,
  ...extra,
});

describe('conditions', () => {
  const t0 = new Date('2030-01-01T00:00:00.123Z');
  const t1 = new Date('2030-01-01T00:05:00Z');

  it('say not Ready and Progressing while workers start, Ready when the floor is available', () => {
    expect(healthConditions('p', settled(3, { available: 1, ready: 1 }), 3).map((c) => [c.type, c.status, c.reason])).toEqual([
      ['Ready', 'False', 'ReplicasNotReady'],
      ['Progressing', 'True', 'RollingOut'],
      ['Degraded', 'False', 'AsExpected'],
    ]);
    expect(healthConditions('p', settled(3), 3).map((c) => c.status)).toEqual(['True', 'False', 'False']);
  });

  it('read the rollout like kubectl rollout status: a Deployment whose new generation is not observed is still rolling out', () => {
    const stale = healthConditions('p', settled(3, { generation: 2 }), 3);
    expect(stale[1]).toMatchObject({
      status: 'True',
      reason: 'RollingOut',
      message: 'Deployment p: waiting for the Deployment controller to observe generation 2',
    });
    // Old pods still running beside updated ones: not complete either.
    expect(healthConditions('p', settled(3, { statusReplicas: 4 }), 3)[1]!.status).toBe('True');
    expect(healthConditions('p', settled(3, { available: 2, updated: 3 }), 3)[1]!.status).toBe('True');
  });

  it('keep Ready when the HPA scales up above the floor, and when a surge rollout keeps the floor available', () => {
    // The HPA asked for 9; 6 are available (the floor): Ready, still progressing.
    const scaling = healthConditions('p', settled(9, { available: 6, ready: 6, updated: 9, statusReplicas: 9 }), 6);
    expect(scaling[0]).toMatchObject({ status: 'True', reason: 'ReplicasReady' });
    expect(scaling[1]!.status).toBe('True');
    expect(healthConditions('p', settled(6, { available: 5 }), 6)[0]!.status).toBe('False');
  });

  it('call a pool scaled to zero Ready with its own reason', () => {
    expect(healthConditions('p', settled(0), 0)[0]).toMatchObject({ status: 'True', reason: 'ScaledToZero' });
  });

  it('warn when transcripts would live on an emptyDir', () => {
    expect(transcriptCondition('p', undefined)).toMatchObject({
      type: 'TranscriptsDurable',
      status: 'False',
      reason: 'EphemeralTranscriptStore',
    });
    expect(transcriptCondition('p', 'file:///var/lib/voice-worker/t')).toMatchObject({ status: 'False' });
    expect(transcriptCondition('p', 's3://bucket/t')).toMatchObject({ status: 'True', reason: 'ObjectStore' });
  });

  it('keep lastTransitionTime while a status holds and move it when it flips', () => {
    const first = mergeConditions(undefined, healthConditions('p', settled(2, { available: 0, ready: 0 }), 2), 1, t0);
    expect(first[0]).toMatchObject({ lastTransitionTime: '2030-01-01T00:00:00Z', observedGeneration: 1 });
    const same = mergeConditions(first, healthConditions('p', settled(2, { available: 1, ready: 1 }), 2), 2, t1);
    expect(same[0]).toMatchObject({ lastTransitionTime: '2030-01-01T00:00:00Z', observedGeneration: 2 });
    const flipped = mergeConditions(same, healthConditions('p', settled(2), 2), 2, t1);
    expect(flipped[0]).toMatchObject({ status: 'True', lastTransitionTime: '2030-01-01T00:05:00Z' });
  });

  it('put the cause of a blocked pool in Degraded and Ready (the printed reason); Progressing says Blocked', () => {
    const c = blockedConditions('SecretNotFound', 'Secret ns/x does not exist');
    expect(c.find((x) => x.type === 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'SecretNotFound',
      message: 'Secret ns/x does not exist',
    });
    expect(c.find((x) => x.type === 'Ready')).toMatchObject({ status: 'False', reason: 'SecretNotFound' });
    expect(c.find((x) => x.type === 'Progressing')).toMatchObject({ status: 'False', reason: 'Blocked' });
  });
});
