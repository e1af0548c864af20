import { describe, expect, it } from 'vitest';
import { poolFixture } from '../test/operator/pool-fixture.ts';
import { lifecycleEvents } from './lifecycle-events.ts';
import type { VoiceWorkerPool } from './types.ts';

const ready = [{ type: 'Ready', status: 'True' as const, reason: 'ReplicasReady', message: '3/3 workers of p are available' }];
const notReady = [{ type: 'Ready', status: 'False' as const, reason: 'ReplicasNotReady', message: '0/3 workers of p are available' }];
const withStatus = (status: VoiceWorkerPool['status'], generation = 1): VoiceWorkerPool => ({
  ...poolFixture(),
  metadata: { ...poolFixture().metadata, generation },
  status,
});

describe('Normal lifecycle events', () => {
  it('say a new generation was applied, once per generation', () => {
    expect(lifecycleEvents(withStatus(undefined), notReady, 3, [])).toEqual([
      { reason: 'SpecApplied', message: 'Generation 1 of VoiceWorkerPool p is applied to its children' },
    ]);
    expect(lifecycleEvents(withStatus({ observedGeneration: 1, desiredFloor: 3 }), notReady, 3, [])).toEqual([]);
  });

  it('say the floor moved, and why when a window moved it', () => {
    expect(lifecycleEvents(withStatus({ observedGeneration: 1, desiredFloor: 3 }), notReady, 30, ['launch'])).toEqual([
      { reason: 'FloorChanged', message: 'The replica floor of p moved from 3 to 30 (pre-scaling window launch)' },
    ]);
  });

  it('say the pool became Ready, on the transition only', () => {
    const before = {
      observedGeneration: 1,
      desiredFloor: 3,
      conditions: [
        {
          type: 'Ready',
          status: 'False' as const,
          reason: 'ReplicasNotReady',
          message: '',
          lastTransitionTime: '2030-01-01T00:00:00Z',
          observedGeneration: 1,
        },
      ],
    };
    expect(lifecycleEvents(withStatus(before), ready, 3, [])).toEqual([{ reason: 'Ready', message: '3/3 workers of p are available' }]);
    const after = { ...before, conditions: [{ ...before.conditions[0]!, status: 'True' as const }] };
    expect(lifecycleEvents(withStatus(after), ready, 3, [])).toEqual([]);
  });
});
