import { describe, expect, it } from 'vitest';
import { secretProblemFromPods } from './pod-secrets.ts';
import type { VoiceWorkerPool } from './types.ts';

const pool = { metadata: { name: 'p', namespace: 'ns', uid: 'u' } } as VoiceWorkerPool;
const waiting = (message: string, reason = 'CreateContainerConfigError') => ({
  metadata: { name: 'p-abc' },
  status: { containerStatuses: [{ name: 'worker', state: { waiting: { reason, message } } }] },
});

describe('missing Secrets learned from pod status', () => {
  it("names a missing Secret or key from the kubelet's message", () => {
    expect(secretProblemFromPods(pool, [waiting('secret "worker" not found')])).toMatchObject({
      reason: 'SecretNotFound',
      message: expect.stringMatching(/^Secret ns\/worker does not exist: pod p-abc of VoiceWorkerPool p cannot start/),
    });
    expect(secretProblemFromPods(pool, [waiting("couldn't find key token in Secret ns/worker")])).toMatchObject({
      reason: 'SecretKeyNotFound',
      message: 'Secret ns/worker has no key "token": pod p-abc of VoiceWorkerPool p cannot start',
    });
  });

  it('ignores pods that wait for anything else', () => {
    expect(
      secretProblemFromPods(pool, [waiting('Back-off pulling image', 'ImagePullBackOff'), { metadata: { name: 'ok' } }]),
    ).toBeUndefined();
  });
});
