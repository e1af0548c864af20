/**
 * The speech server's Deployment: the worker image's second command (`node speech/main.ts`), probes
 * on its management port, the same pod and container hardening as the workers, its token from the
 * pool's Secret. `replicas` is left out when an HPA owns the count.
 */
import { SPEECH_METRICS_PORT, SPEECH_PORT, type KubeObject, type SelfHostedSpeech, type VoiceWorkerPool } from '../types.ts';
import { imageOf, placement, podSecurityContext } from './deployment.ts';
import { DEFAULT_BUILD_OPTIONS, type BuildOptions } from './options.ts';
import { speechMetadata, speechSelectorLabels } from './speech-common.ts';

/** Node's scratch for the server (uploads are held in memory; this is for the runtime's own files). */
const SPEECH_TMP = '256Mi';

function resources(s: SelfHostedSpeech) {
  const gpu = s.resources.gpu && s.resources.gpu.count > 0 ? { [s.resources.gpu.resourceName]: String(s.resources.gpu.count) } : {};
  return {
    requests: { cpu: String(s.resources.requests.cpu), memory: s.resources.requests.memory, 'ephemeral-storage': SPEECH_TMP, ...gpu },
    limits: { cpu: String(s.resources.limits.cpu), memory: s.resources.limits.memory, 'ephemeral-storage': SPEECH_TMP, ...gpu },
  };
}

const plain = (name: string, value: number | undefined) => (value === undefined ? [] : [{ name, value: String(value) }]);

/** The server's own variables; spans go where the pool's workers send theirs, as service voice-speech. */
export function speechEnv(s: SelfHostedSpeech, telemetry?: VoiceWorkerPool['spec']['telemetry']) {
  return [
    { name: 'SPEECH_TOKEN', valueFrom: { secretKeyRef: { name: s.tokenSecret.name, key: s.tokenSecret.key } } },
    { name: 'SPEECH_PORT', value: String(SPEECH_PORT) },
    { name: 'SPEECH_METRICS_PORT', value: String(SPEECH_METRICS_PORT) },
    ...plain('SPEECH_THREADS', s.threads),
    ...plain('SPEECH_STT_CONCURRENCY', s.sttConcurrency),
    ...plain('SPEECH_TTS_CONCURRENCY', s.ttsConcurrency),
    ...plain('SPEECH_QUEUE_CAPACITY', s.queueCapacity),
    ...plain('SPEECH_MAX_SESSIONS', s.maxSessions),
    ...(telemetry?.otlpEndpoint
      ? [
          { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: telemetry.otlpEndpoint },
          { name: 'OTEL_SERVICE_NAME', value: 'voice-speech' },
        ]
      : []),
  ];
}

export function buildSpeechDeployment(
  pool: VoiceWorkerPool,
  s: SelfHostedSpeech,
  replicas: number | undefined,
  options: BuildOptions = DEFAULT_BUILD_OPTIONS,
): KubeObject {
  const image = s.image ?? pool.spec.image;
  const probe = (path: string, extra: Record<string, number>) => ({ httpGet: { path, port: 'metrics' }, ...extra });
  const metadata = speechMetadata(pool);
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata,
    spec: {
      ...(replicas === undefined ? {} : { replicas }),
      selector: { matchLabels: speechSelectorLabels(pool) },
      revisionHistoryLimit: 5,
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      template: {
        metadata: {
          labels: metadata.labels,
          annotations: {
            'prometheus.io/scrape': 'true',
            'prometheus.io/port': String(SPEECH_METRICS_PORT),
            'prometheus.io/path': '/metrics',
          },
        },
        spec: {
          terminationGracePeriodSeconds: 60,
          enableServiceLinks: false,
          automountServiceAccountToken: false,
          securityContext: podSecurityContext(options),
          ...(pool.spec.image.pullSecrets?.length ? { imagePullSecrets: pool.spec.image.pullSecrets.map((name) => ({ name })) } : {}),
          ...placement(s.placement),
          containers: [
            {
              name: 'speech',
              image: imageOf(image),
              imagePullPolicy: image.pullPolicy ?? 'IfNotPresent',
              command: ['node', 'speech/main.ts'],
              ports: [
                { name: 'http', containerPort: SPEECH_PORT, protocol: 'TCP' },
                { name: 'metrics', containerPort: SPEECH_METRICS_PORT, protocol: 'TCP' },
              ],
              env: speechEnv(s, pool.spec.telemetry),
              resources: resources(s),
              // Loading both models took 2-12 s on a busy machine (docs/speech.md): 120 s allowed.
              startupProbe: probe('/healthz', { periodSeconds: 2, failureThreshold: 60 }),
              livenessProbe: probe('/healthz', { periodSeconds: 10, failureThreshold: 3, timeoutSeconds: 2 }),
              readinessProbe: probe('/readyz', { periodSeconds: 5, failureThreshold: 2, timeoutSeconds: 2 }),
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                runAsNonRoot: true,
                capabilities: { drop: ['ALL'] },
              },
              volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
            },
          ],
          volumes: [{ name: 'tmp', emptyDir: { sizeLimit: SPEECH_TMP } }],
        },
      },
    },
  };
}
