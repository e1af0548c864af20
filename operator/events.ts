/** Kubernetes Events about a pool (core/v1), so `kubectl describe vwp` shows why it is stuck. */
import type { Logger } from '../lib/log.ts';
import { resourcePath, type KubeClient } from './kube.ts';
import type { VoiceWorkerPool } from './types.ts';

export async function recordEvent(
  kube: KubeClient,
  log: Logger,
  pool: VoiceWorkerPool,
  type: 'Normal' | 'Warning',
  reason: string,
  message: string,
  now: Date,
): Promise<void> {
  const time = now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  try {
    await kube.request('POST', resourcePath({ group: '', version: 'v1', plural: 'events', namespace: pool.metadata.namespace }), {
      body: {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { generateName: `${pool.metadata.name}.`, namespace: pool.metadata.namespace },
        involvedObject: {
          apiVersion: pool.apiVersion,
          kind: pool.kind,
          name: pool.metadata.name,
          namespace: pool.metadata.namespace,
          uid: pool.metadata.uid,
        },
        type,
        reason,
        message,
        source: { component: 'voice-operator' },
        firstTimestamp: time,
        lastTimestamp: time,
        count: 1,
      },
    });
  } catch (err) {
    // An event is a courtesy; failing to write one must not fail the reconcile.
    log.warn('could not record an event', { pool: pool.metadata.name, reason, error: err });
  }
}
