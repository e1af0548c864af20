import type { VoiceWorkerPool } from '../../operator/types.ts';

/**
 * A VoiceWorkerPool object as the API server would hand it to the builders (defaults filled in),
 * for the builders' unit tests; `spec` overrides any field.
 */
export function poolFixture(spec: Partial<VoiceWorkerPool['spec']> = {}): VoiceWorkerPool {
  return {
    apiVersion: 'voice.service.io/v1beta1',
    kind: 'VoiceWorkerPool',
    metadata: { name: 'p', namespace: 'ns', uid: 'uid-1', generation: 1 },
    spec: {
      image: { repository: 'reg/worker', tag: 'v1.3.0' },
      replicas: 3,
      resources: { requests: { cpu: '2', memory: '4Gi' }, limits: { cpu: 4, memory: '8Gi' } },
      secrets: { workerToken: { name: 'w', key: 'token' }, openaiApiKey: { name: 'ai', key: 'key' } },
      redis: { url: 'redis://r:6379' },
      backendUrl: 'https://app.example',
      roomProvider: 'local',
      terminationGracePeriodSeconds: 1800,
      ...spec,
    },
  };
}
