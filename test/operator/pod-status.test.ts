/**
 * Status a person can act on (issue 38): the pool's pods that cannot pull their image, find no node
 * or crash in a loop, of the workers and of the speech server, become conditions with a reason, a
 * Warning Event and the REASON column of `kubectl get vwp`. No kubelet or scheduler runs here: the
 * test creates the pods and writes their status as those would.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningOperator } from '../../operator/controller.ts';
import type { KubeClient } from '../../operator/kube.ts';
import { poolPath } from '../../operator/reconcile.ts';
import type { VoiceWorkerPool } from '../../operator/types.ts';
import {
  adminClient,
  createNamespace,
  createPool,
  createSecret,
  ensureCrd,
  eventually,
  kubectl,
  poolSpec,
  runOperator,
} from './helpers.ts';

// Fully qualified: crd.test.ts installs another group whose pools have the short name vwp too.
const VWP = 'voiceworkerpools.voice.service.io';
let kube: KubeClient;
let ns: string;
let operator: RunningOperator;

beforeAll(async () => {
  kube = await adminClient();
  await ensureCrd(kube);
  ns = await createNamespace(kube, 'podstatus');
  await createSecret(kube, ns, 'worker', { token: 'shared-worker-token' });
  // No controller manager here makes the namespace's default ServiceAccount: pods need one.
  await kube.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, {
    body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } },
  });
  operator = await runOperator(kube, ns);
});
afterAll(async () => {
  await operator?.stop();
  kube?.close();
});

const pool = (name: string) => kube.get<VoiceWorkerPool>(poolPath(ns, name));
const condition = (p: VoiceWorkerPool, type: string) => p.status?.conditions?.find((c) => c.type === type);
const events = () =>
  kube.get<{ items: Array<{ reason: string; type: string; message: string; involvedObject: { name: string } }> }>(
    `/api/v1/namespaces/${ns}/events`,
  );

/** A pod as the pool's ReplicaSet would make it (its labels), with the status a kubelet or scheduler writes. */
async function podWithStatus(poolName: string, podName: string, status: Record<string, unknown>, speech = false): Promise<void> {
  const labels = speech
    ? {
        'app.kubernetes.io/name': 'voice-speech',
        'app.kubernetes.io/instance': poolName,
        'voice.service.io/pool': poolName,
        'app.kubernetes.io/component': 'speech',
      }
    : { 'app.kubernetes.io/name': 'voice-worker', 'app.kubernetes.io/instance': poolName, 'voice.service.io/pool': poolName };
  const container = speech ? 'speech' : 'worker';
  await kube.request('POST', `/api/v1/namespaces/${ns}/pods`, {
    body: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: podName, labels },
      spec: { automountServiceAccountToken: false, containers: [{ name: container, image: 'registry.example.com/voice-worker:v1.3.0' }] },
    },
  });
  await kube.mergePatch(`/api/v1/namespaces/${ns}/pods/${podName}/status`, { status });
}

const waiting = (name: string, reason: string, message: string, extra: Record<string, unknown> = {}) => ({
  phase: 'Pending',
  containerStatuses: [
    {
      name,
      image: 'registry.example.com/voice-worker:v1.3.0',
      imageID: '',
      ready: false,
      restartCount: 0,
      state: { waiting: { reason, message } },
      ...extra,
    },
  ],
});

describe('the pods of a pool in its status', () => {
  it('names an image that cannot be pulled: Degraded and Ready say ImagePullError, an Event, and kubectl get vwp prints it', async () => {
    await createPool(kube, ns, 'ghost', poolSpec({ replicas: 1, autoscaling: { enabled: false } }));
    const starting = await eventually(
      () => pool('ghost'),
      (p) => condition(p, 'Ready') !== undefined,
      'ghost status',
    );
    expect(condition(starting, 'Ready')).toMatchObject({ status: 'False', reason: 'ReplicasNotReady' });
    await podWithStatus('ghost', 'ghost-6d4f-a1', waiting('worker', 'ErrImagePull', 'failed to pull and unpack image: not found'));
    const broken = await eventually(
      () => pool('ghost'),
      (p) => condition(p, 'Degraded')?.status === 'True',
      'ghost Degraded',
    );
    expect(condition(broken, 'Degraded')).toMatchObject({
      reason: 'ImagePullError',
      message: expect.stringContaining(
        `worker pod ghost-6d4f-a1 of VoiceWorkerPool ghost cannot pull the image "registry.example.com/voice-worker:v1.3.0"`,
      ),
    });
    expect(condition(broken, 'Ready')).toMatchObject({ status: 'False', reason: 'ImagePullError' });
    await eventually(
      events,
      (l) => l.items.some((e) => e.involvedObject.name === 'ghost' && e.reason === 'ImagePullError' && e.type === 'Warning'),
      'an ImagePullError event',
    );
    expect(await kubectl(['get', VWP, 'ghost', '-n', ns])).toMatch(
      /NAME\s+READY\s+FLOOR\s+REASON\s+ENDPOINT\s+AGE\n\s*ghost\s+0\s+1\s+ImagePullError\s+http:\/\/ghost\./,
    );

    // The kubelet backs off: ImagePullBackOff is the same cause, and the message does not flap.
    await kube.mergePatch(`/api/v1/namespaces/${ns}/pods/ghost-6d4f-a1/status`, {
      status: waiting('worker', 'ImagePullBackOff', 'Back-off pulling image'),
    });
    await new Promise((r) => setTimeout(r, 1000));
    expect(condition(await pool('ghost'), 'Degraded')?.message).toBe(condition(broken, 'Degraded')?.message);

    // The pod goes: the cause goes with it.
    await kube.request('DELETE', `/api/v1/namespaces/${ns}/pods/ghost-6d4f-a1`, {
      body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 },
    });
    const cleared = await eventually(
      () => pool('ghost'),
      (p) => condition(p, 'Degraded')?.status === 'False',
      'ghost no longer Degraded',
    );
    expect(condition(cleared, 'Ready')).toMatchObject({ status: 'False', reason: 'ReplicasNotReady' });
  });

  it("names a pod no node can take: Unschedulable with the scheduler's words", async () => {
    await createPool(kube, ns, 'heavy', poolSpec({ replicas: 1, autoscaling: { enabled: false } }));
    await eventually(
      () => pool('heavy'),
      (p) => condition(p, 'Ready') !== undefined,
      'heavy status',
    );
    const message =
      '0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.';
    await podWithStatus('heavy', 'heavy-7c9b-b2', {
      phase: 'Pending',
      conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message }],
    });
    const p = await eventually(
      () => pool('heavy'),
      (x) => condition(x, 'Degraded')?.reason === 'Unschedulable',
      'heavy Unschedulable',
    );
    expect(condition(p, 'Degraded')?.message).toBe(
      `worker pod heavy-7c9b-b2 of VoiceWorkerPool heavy cannot be scheduled: ${message}; lower ` +
        `spec.resources.requests or the replicas, widen spec.placement, or add nodes`,
    );
    expect(await kubectl(['get', VWP, 'heavy', '-n', ns])).toMatch(/heavy\s+0\s+1\s+Unschedulable\s/);
    await eventually(
      events,
      (l) => l.items.some((e) => e.involvedObject.name === 'heavy' && e.reason === 'Unschedulable'),
      'an Unschedulable event',
    );
  });

  it('names a worker in a crash loop, with its last exit', async () => {
    await createPool(kube, ns, 'crashy', poolSpec({ replicas: 1, autoscaling: { enabled: false } }));
    await eventually(
      () => pool('crashy'),
      (p) => condition(p, 'Ready') !== undefined,
      'crashy status',
    );
    await podWithStatus('crashy', 'crashy-5b8d-c3', {
      phase: 'Running',
      containerStatuses: [
        {
          name: 'worker',
          image: 'registry.example.com/voice-worker:v1.3.0',
          imageID: '',
          ready: false,
          restartCount: 4,
          state: {
            waiting: { reason: 'CrashLoopBackOff', message: 'back-off 1m20s restarting failed container=worker pod=crashy-5b8d-c3' },
          },
          lastState: {
            terminated: { reason: 'Error', exitCode: 1, startedAt: '2026-11-29T00:00:00Z', finishedAt: '2026-11-29T00:00:01Z' },
          },
        },
      ],
    });
    const p = await eventually(
      () => pool('crashy'),
      (x) => condition(x, 'Degraded')?.reason === 'CrashLoopBackOff',
      'crashy CrashLoopBackOff',
    );
    expect(condition(p, 'Degraded')?.message).toBe(
      'worker pod crashy-5b8d-c3 of VoiceWorkerPool crashy: container worker keeps crashing (last exit: Error, ' +
        'code 1); kubectl logs crashy-5b8d-c3 -c worker --previous shows why',
    );
    expect(condition(p, 'Ready')?.reason).toBe('CrashLoopBackOff');
  });

  it('names the speech server in a crash loop: SpeechReady and Ready carry the reason', async () => {
    await createSecret(kube, ns, 'speech', { token: 'speech-token-of-at-least-32-characters' });
    await createPool(
      kube,
      ns,
      'talky',
      poolSpec({
        replicas: 1,
        autoscaling: { enabled: false },
        speech: { selfHosted: { tokenSecret: { name: 'speech' }, autoscaling: { enabled: false } } },
      }),
    );
    const starting = await eventually(
      () => pool('talky'),
      (p) => condition(p, 'SpeechReady') !== undefined,
      'talky status',
    );
    expect(condition(starting, 'SpeechReady')).toMatchObject({ status: 'False', reason: 'SpeechNotReady' });
    await podWithStatus(
      'talky',
      'talky-speech-9f7a-d4',
      waiting('speech', 'CrashLoopBackOff', 'back-off 10s restarting failed container', {
        lastState: {
          terminated: { reason: 'OOMKilled', exitCode: 137, startedAt: '2026-11-29T00:00:00Z', finishedAt: '2026-11-29T00:00:01Z' },
        },
      }),
      true,
    );
    const p = await eventually(
      () => pool('talky'),
      (x) => condition(x, 'SpeechReady')?.reason === 'CrashLoopBackOff',
      'talky speech CrashLoopBackOff',
    );
    expect(condition(p, 'SpeechReady')?.message).toBe(
      'speech server pod talky-speech-9f7a-d4 of VoiceWorkerPool talky: container speech keeps crashing (last ' +
        'exit: OOMKilled, code 137); kubectl logs talky-speech-9f7a-d4 -c speech --previous shows why',
    );
    expect(condition(p, 'Degraded')).toMatchObject({ status: 'True', reason: 'CrashLoopBackOff' });
    expect(condition(p, 'Ready')).toMatchObject({ status: 'False', reason: 'CrashLoopBackOff' });
  });

  it('shows no endpoint for a pool that has no Service (blocked before its children exist)', async () => {
    await createPool(kube, ns, 'lacking', poolSpec({ secrets: { workerToken: { name: 'absent' } } }));
    const p = await eventually(
      () => pool('lacking'),
      (x) => condition(x, 'Degraded')?.reason === 'SecretNotFound',
      'lacking blocked',
    );
    expect(p.status?.endpoint).toBeUndefined();
    expect(await kubectl(['get', VWP, 'lacking', '-n', ns])).toMatch(/lacking\s+0\s+3\s+SecretNotFound\s+\d+s\n/);
  });
});
