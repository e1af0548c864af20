/**
 * Names, labels and addresses of a pool's self-hosted speech server (spec.speech.selfHosted): its
 * children are all named `<pool>-speech`, carry the pool's label and a controller reference to the
 * pool, and select pods of their own (never the workers').
 */
import { POOL_LABEL, SPEECH_PORT, type SelfHostedSpeech, type VoiceWorkerPool } from '../types.ts';
import { childLabels, ownerReference } from './common.ts';

/** The pool's self-hosted speech when it is turned on; undefined otherwise. */
export function selfHostedSpeech(pool: VoiceWorkerPool): SelfHostedSpeech | undefined {
  const s = pool.spec.speech?.selfHosted;
  return s && s.enabled !== false ? s : undefined;
}

/** `<pool>-speech`: the CRD keeps such a pool's name to 56 characters, so this is a DNS-1035 label too. */
export const speechName = (pool: VoiceWorkerPool): string => `${pool.metadata.name}-speech`;

/** Selector labels of the speech pods: stable for the life of the pool (a Deployment's selector is immutable). */
export function speechSelectorLabels(pool: VoiceWorkerPool): Record<string, string> {
  return { 'app.kubernetes.io/name': 'voice-speech', 'app.kubernetes.io/instance': pool.metadata.name, [POOL_LABEL]: pool.metadata.name };
}

export function speechMetadata(pool: VoiceWorkerPool) {
  return {
    name: speechName(pool),
    namespace: pool.metadata.namespace,
    labels: { ...childLabels(pool), ...speechSelectorLabels(pool), 'app.kubernetes.io/component': 'speech' },
    ownerReferences: [ownerReference(pool)],
  };
}

/** The OpenAI-compatible base URL the workers' STT and TTS clients use (the Service's cluster DNS name). */
export const speechBaseUrl = (pool: VoiceWorkerPool): string =>
  `http://${speechName(pool)}.${pool.metadata.namespace}.svc:${SPEECH_PORT}/v1`;
