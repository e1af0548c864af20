import { describe, expect, it } from 'vitest';
import { podFingerprint, podProblem } from './pod-health.ts';
import type { PodStatusView } from './pod-secrets.ts';
import { poolFixture } from '../test/operator/pool-fixture.ts';

const pool = poolFixture();
const speech = { 'app.kubernetes.io/component': 'speech' };
const waiting = (name: string, reason: string, message = '', labels: Record<string, string> = {}): PodStatusView => ({
  metadata: { name, labels },
  status: {
    containerStatuses: [
      {
        name: labels['app.kubernetes.io/component'] ? 'speech' : 'worker',
        image: 'reg/worker:v1',
        state: { waiting: { reason, message } },
      },
    ],
  },
});

describe("the problem of a pool's pods", () => {
  it('names an image pull the same way whether the kubelet says ErrImagePull or ImagePullBackOff', () => {
    const a = podProblem(pool, [waiting('p-1', 'ErrImagePull', 'not found')]);
    const b = podProblem(pool, [waiting('p-1', 'ImagePullBackOff', 'Back-off pulling image')]);
    expect(a).toMatchObject({
      reason: 'ImagePullError',
      speech: false,
      message: expect.stringContaining('worker pod p-1 of VoiceWorkerPool p cannot pull the image "reg/worker:v1" of container worker'),
    });
    expect(b?.message).toBe(a?.message);
    expect(podProblem(pool, [waiting('p-1', 'InvalidImageName', "couldn't parse image name")])?.message).toContain(
      "(couldn't parse image name)",
    );
  });

  it('looks at the workers before the speech server, the first pod by name, and skips pods going away', () => {
    const pods = [waiting('s-1', 'CrashLoopBackOff', '', speech), waiting('p-b', 'CrashLoopBackOff'), waiting('p-a', 'ErrImagePull')];
    expect(podProblem(pool, pods)).toMatchObject({ reason: 'ImagePullError', message: expect.stringContaining('worker pod p-a ') });
    const leaving = { ...waiting('p-a', 'ErrImagePull'), metadata: { name: 'p-a', deletionTimestamp: '2030-01-01T00:00:00Z' } };
    expect(podProblem(pool, [leaving, pods[0]!])).toMatchObject({
      reason: 'CrashLoopBackOff',
      speech: true,
      message: expect.stringContaining('speech server pod s-1'),
    });
    expect(
      podProblem(pool, [{ metadata: { name: 'ok' }, status: { containerStatuses: [{ name: 'worker', ready: true }] } }]),
    ).toBeUndefined();
  });

  it("names a pod no node can take, with the scheduler's message, and a missing Secret first", () => {
    const pending: PodStatusView = {
      metadata: { name: 'p-1' },
      status: {
        conditions: [
          { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/1 nodes are available: 1 Insufficient cpu.' },
        ],
      },
    };
    expect(podProblem(pool, [pending])).toMatchObject({
      reason: 'Unschedulable',
      message: expect.stringContaining('cannot be scheduled: 0/1 nodes are available: 1 Insufficient cpu.'),
    });
    expect(podProblem(pool, [pending, waiting('p-2', 'CreateContainerConfigError', 'secret "w" not found')])).toMatchObject({
      reason: 'SecretNotFound',
    });
  });

  it('changes its fingerprint with a waiting reason or scheduling, not with what only a probe changes', () => {
    const base = waiting('p-1', 'ErrImagePull');
    expect(podFingerprint(base)).not.toBe(podFingerprint(waiting('p-1', 'CrashLoopBackOff')));
    expect(podFingerprint(base)).toBe(podFingerprint(waiting('p-1', 'ErrImagePull', 'another message')));
    const restarted = {
      ...base,
      status: { ...base.status, containerStatuses: [{ ...base.status!.containerStatuses![0]!, restartCount: 5 } as never] },
    };
    expect(podFingerprint(restarted)).toBe(podFingerprint(base));
  });
});
