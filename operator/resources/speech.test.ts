/**
 * The pool's self-hosted speech server: the builders' objects, and the contract on both ends. The
 * speech container's environment passes the server's own `loadSpeechConfig`, and the workers'
 * environment, with only an LLM key, passes the worker's `loadConfig` pointed at the server's Service.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSpeechConfig } from '../../speech/config.ts';
import { poolFixture } from '../../test/operator/pool-fixture.ts';
import { loadConfig } from '../../worker/config.ts';
import type { SelfHostedSpeech, VoiceWorkerPool } from '../types.ts';
import { secretProblem, secretRefs } from '../validate.ts';
import type { EnvVar } from './env.ts';
import { desiredState } from './index.ts';
import { workerEnv } from './deployment.ts';
import { buildSpeechDeployment } from './speech-deployment.ts';

const selfHosted = (extra: Partial<SelfHostedSpeech> = {}): SelfHostedSpeech => ({
  enabled: true,
  tokenSecret: { name: 'speech', key: 'token' },
  replicas: 1,
  autoscaling: { enabled: true, minReplicas: 2, maxReplicas: 6, targetCPUUtilizationPercentage: 70 },
  resources: { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '2', memory: '1536Mi' } },
  ...extra,
});

/** A pool the CRD admits with only an LLM key (its speech is its own). */
function pool(speech: SelfHostedSpeech = selfHosted()): VoiceWorkerPool {
  return poolFixture({
    replicas: 1,
    secrets: { workerToken: { name: 'w', key: 'token' }, llmApiKey: { name: 'ai', key: 'llm' } },
    speech: { selfHosted: speech },
  });
}

function resolve(env: EnvVar[]): Record<string, string> {
  return Object.fromEntries(
    env.map(
      (e) =>
        [
          'value' in e
            ? [e.name, e.value]
            : 'secretKeyRef' in e.valueFrom
              ? [e.name, `secret-${e.valueFrom.secretKeyRef.name}-${e.valueFrom.secretKeyRef.key}-0123456789`]
              : [e.name, 'pod-x'],
        ][0]!,
    ),
  );
}

interface Pod {
  spec: {
    replicas?: number;
    selector: { matchLabels: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string> };
      spec: Record<string, unknown> & {
        containers: Array<Record<string, unknown> & { env: EnvVar[]; resources: { limits: Record<string, string> } }>;
      };
    };
  };
}

describe('self-hosted speech', () => {
  it('builds <pool>-speech as Deployment, Service, PDB and HPA, owned by the pool, selecting only speech pods', () => {
    const state = desiredState(pool(), new Date());
    const speech = state.apply.filter((c) => c.metadata.name === 'p-speech');
    expect(speech.map((c) => c.kind)).toEqual(['Deployment', 'Service', 'PodDisruptionBudget', 'HorizontalPodAutoscaler']);
    for (const c of speech)
      expect(c.metadata.ownerReferences).toEqual([
        expect.objectContaining({ kind: 'VoiceWorkerPool', name: 'p', uid: 'uid-1', controller: true }),
      ]);
    expect(state.speech).toMatchObject({ deployment: { metadata: { name: 'p-speech' } }, autoscaled: true, floor: 2 });
    const d = speech[0] as unknown as Pod;
    expect(d.spec.replicas).toBeUndefined(); // the HPA's
    expect(d.spec.selector.matchLabels['app.kubernetes.io/name']).toBe('voice-speech');
    const workers = state.apply.find((c) => c.kind === 'Service' && c.metadata.name === 'p') as unknown as {
      spec: { selector: Record<string, string> };
    };
    expect(workers.spec.selector['app.kubernetes.io/name']).toBe('voice-worker');
    const c = d.spec.template.spec.containers[0]!;
    expect(c.command).toEqual(['node', 'speech/main.ts']);
    expect(c.image).toBe('reg/worker:v1.3.0');
    expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, runAsNonRoot: true });
    expect(c.env).toContainEqual({ name: 'SPEECH_TOKEN', valueFrom: { secretKeyRef: { name: 'speech', key: 'token' } } });
    expect(speech[3]!.spec as { minReplicas: number; scaleTargetRef: { name: string } }).toMatchObject({
      minReplicas: 2,
      scaleTargetRef: { name: 'p-speech' },
    });
  });

  it('gives the speech server an environment its own loadSpeechConfig accepts, with the knobs and probes on its metrics port', () => {
    const d = buildSpeechDeployment(
      pool(),
      selfHosted({ threads: 2, sttConcurrency: 2, queueCapacity: 8, maxSessions: 16 }),
      1,
    ) as unknown as Pod;
    const c = d.spec.template.spec.containers[0]!;
    const config = loadSpeechConfig(resolve(c.env));
    expect(config).toMatchObject({ port: 7870, metricsPort: 9091, threads: 2, sttConcurrency: 2, queueCapacity: 8, maxSessions: 16 });
    expect(c.readinessProbe).toMatchObject({ httpGet: { path: '/readyz', port: 'metrics' } });
    expect(c.ports).toContainEqual({ name: 'metrics', containerPort: 9091, protocol: 'TCP' });
    expect(d.spec.replicas).toBe(1);
  });

  it('points the workers at the Service with the token as both keys, and the worker accepts it with only an LLM key', () => {
    const env = workerEnv(pool());
    expect(env).toContainEqual({ name: 'STT_API_KEY', valueFrom: { secretKeyRef: { name: 'speech', key: 'token' } } });
    expect(env).toContainEqual({ name: 'TTS_API_KEY', valueFrom: { secretKeyRef: { name: 'speech', key: 'token' } } });
    const config = loadConfig(resolve(env));
    expect(config.stt.baseURL).toBe('http://p-speech.ns.svc:7870/v1');
    expect(config.stt.apiKey).toBe('secret-speech-token-0123456789');
    expect(config.tts.baseURL).toBe('http://p-speech.ns.svc:7870/v1');
  });

  it('names the token Secret among those the operator checks, and sends spans where the workers do', () => {
    const p = pool();
    expect(secretRefs(p)).toContainEqual({ field: 'spec.speech.selfHosted.tokenSecret', ref: { name: 'speech', key: 'token' } });
    expect(
      secretProblem(
        p,
        new Map([
          ['w', ['token']],
          ['ai', ['llm']],
          ['speech', ['other']],
        ]),
      )?.message,
    ).toContain('spec.speech.selfHosted.tokenSecret');
    p.spec.telemetry = { otlpEndpoint: 'http://otel:4318', serviceName: 'voice-worker' };
    const env = (buildSpeechDeployment(p, p.spec.speech!.selfHosted!, 1) as unknown as Pod).spec.template.spec.containers[0]!.env;
    expect(env).toEqual(
      expect.arrayContaining([
        { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: 'http://otel:4318' },
        { name: 'OTEL_SERVICE_NAME', value: 'voice-speech' },
      ]),
    );
  });

  it('passes GPU and placement through, and takes an image of its own', () => {
    const s = selfHosted({
      resources: {
        requests: { cpu: '1', memory: '1Gi' },
        limits: { cpu: '2', memory: '2Gi' },
        gpu: { count: 1, resourceName: 'nvidia.com/gpu' },
      },
      placement: { nodeSelector: { gpu: 'yes' }, tolerations: [{ key: 'gpu', operator: 'Exists', effect: 'NoSchedule' }] },
      image: { repository: 'reg/speech-gpu', tag: 'v2' },
    });
    const d = buildSpeechDeployment(pool(s), s, 1) as unknown as Pod;
    expect(d.spec.template.spec.nodeSelector).toEqual({ gpu: 'yes' });
    expect(d.spec.template.spec.tolerations).toHaveLength(1);
    expect(d.spec.template.spec.containers[0]!.resources.limits['nvidia.com/gpu']).toBe('1');
    expect(d.spec.template.spec.containers[0]!.image).toBe('reg/speech-gpu:v2');
  });

  it("lets only the pool's workers reach the speech API when the workers get a NetworkPolicy", () => {
    const state = desiredState(pool(), new Date(), { networkPolicy: { metricsNamespaces: ['monitoring'] } });
    const np = state.apply.find((c) => c.kind === 'NetworkPolicy' && c.metadata.name === 'p-speech')!;
    const ingress = (
      np.spec as { ingress: Array<{ from: Array<{ podSelector?: { matchLabels: Record<string, string> } }>; ports: unknown[] }> }
    ).ingress;
    expect(ingress[0]).toEqual({
      from: [
        {
          podSelector: {
            matchLabels: { 'app.kubernetes.io/name': 'voice-worker', 'app.kubernetes.io/instance': 'p', 'voice.service.io/pool': 'p' },
          },
        },
      ],
      ports: [{ port: 7870, protocol: 'TCP' }],
    });
    expect(ingress[1]!.ports).toEqual([{ port: 9091, protocol: 'TCP' }]);
  });

  it('makes eleven children at most, as docs/operator.md says: six for the workers, five for the speech server', () => {
    const full = {
      ...pool(),
      spec: {
        ...pool().spec,
        roomProvider: 'livekit' as const,
        autoscaling: {
          enabled: true,
          minReplicas: 1,
          maxReplicas: 4,
          targetCPUUtilizationPercentage: 70,
          scaleDown: { stabilizationWindowSeconds: 300, maxPercentPerMinute: 10 },
        },
        ingress: { host: 'v.example.com', tlsSecretName: 'tls' },
      },
    };
    const { apply } = desiredState(full, new Date('2030-01-01T00:00:00Z'), { runAsUser: 1000, networkPolicy: { metricsNamespaces: [] } });
    const byName = (name: string) =>
      apply
        .filter((c) => c.metadata.name === name)
        .map((c) => c.kind)
        .sort();
    expect(byName('p')).toEqual(['Deployment', 'HorizontalPodAutoscaler', 'Ingress', 'NetworkPolicy', 'PodDisruptionBudget', 'Service']);
    expect(byName('p-speech')).toEqual(['Deployment', 'HorizontalPodAutoscaler', 'NetworkPolicy', 'PodDisruptionBudget', 'Service']);
    expect(apply).toHaveLength(11);
    expect(readFileSync(join(import.meta.dirname, '../../docs/operator.md'), 'utf8')).toMatch(
      /up to\s+six for the workers[\s\S]{0,200}up to five more for its\s+speech server[\s\S]{0,200}eleven in all/,
    );
  });

  it('wants no speech children when it is off (they are deleted if the operator owns them), and the workers keep their providers', () => {
    const off = pool(selfHosted({ enabled: false }));
    off.spec.secrets.openaiApiKey = { name: 'ai', key: 'openai' };
    const state = desiredState(off, new Date());
    expect(state.apply.some((c) => c.metadata.name === 'p-speech')).toBe(false);
    expect(state.speech).toBeUndefined();
    expect(
      state.absent
        .filter((c) => c.name === 'p-speech')
        .map((c) => c.kind)
        .sort(),
    ).toEqual(['Deployment', 'HorizontalPodAutoscaler', 'NetworkPolicy', 'PodDisruptionBudget', 'Service']);
    expect(resolve(workerEnv(off)).STT_BASE_URL).toBeUndefined();
  });
});
