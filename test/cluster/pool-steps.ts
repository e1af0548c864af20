import { fileURLToPath } from 'node:url';
import type { Session } from '../../sdk/server/index.ts';
import { waitFor } from '../harness/ports.ts';
import type { ClusterInfo } from './cluster-script.ts';
import type { HostSystem } from './host-system.ts';
import type { KubeCli } from './kube-cli.ts';
import {
  chartSetArgs,
  OPERATOR_NAMESPACE,
  poolManifest,
  POOL_NAMESPACE,
  RELEASE,
  redisManifest,
  workerSecretsManifest,
} from './pool-fixtures.ts';

/**
 * What the cluster tests and the cluster bench (bench/cluster.bench.ts) both do with a pool: install
 * the chart and the pool's neighbours, wire the interview pool to the host's service side, wait for a
 * rollout, find pods and transcripts, and wait for a session's outcome.
 */
export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}
export interface PoolStatus {
  status?: { readyReplicas?: number; conditions?: Condition[]; endpoint?: string; desiredFloor?: number };
}
export interface PodSummary {
  name: string;
  ready: boolean;
  terminating: boolean;
}

export const condition = (conditions: Condition[] | undefined, type: string): Condition | undefined =>
  conditions?.find((c) => c.type === type);

/**
 * helm install of the chart with our images, waiting for its Deployment. `upgrade --install`: the
 * files of the cluster project run in either order on one cluster, and each installs it first.
 */
export async function installChart(k: KubeCli, cluster: ClusterInfo): Promise<void> {
  await k.helm([
    'upgrade',
    '--install',
    RELEASE,
    'charts/voice-operator',
    '--namespace',
    OPERATOR_NAMESPACE,
    '--create-namespace',
    ...chartSetArgs(cluster),
    '--wait',
    '--timeout',
    '3m',
  ]);
}

/** The pools' namespace with its Redis and the worker's Secrets. */
export async function installPoolNeighbours(k: KubeCli, cluster: ClusterInfo, workerToken: string): Promise<void> {
  await k.kubectl(['create', 'namespace', POOL_NAMESPACE]);
  await k.kubectl(['apply', '-f', '-'], redisManifest(cluster));
  await k.kubectl(['apply', '-f', '-'], workerSecretsManifest(workerToken));
}

export interface InterviewPoolOptions {
  /** A plain env value: changing it rolls the Deployment. */
  revision: string;
  /** LiveKit rooms (a livekit-server on the host), which lets the pool have several replicas. */
  livekit?: { url: string; replicas: number };
  /** Extra spec fields (sizing, resources, ...). */
  spec?: Record<string, unknown>;
}

/**
 * The pool 'local' wired to the host's stand-in providers, OTLP receiver and api-stub, with TLS in the pod
 * (contract C4, the Secret 'pool-tls') and rooms at the Service's address `svc`, which the host reaches
 * through kube-proxy: local rooms need one replica. With `livekit` the same pool moves to LiveKit rooms
 * (key and secret in the Secret 'livekit').
 */
export function interviewPoolManifest(cluster: ClusterInfo, host: HostSystem, svc: URL, o: InterviewPoolOptions): string {
  const h = host.forPods;
  return poolManifest(cluster, {
    name: 'local',
    backendUrl: h.backendUrl,
    replicas: o.livekit?.replicas,
    spec: {
      // The LiveKit pool's count is its own `replicas` (autoscaling off), so that a scale-down happens
      // exactly when the test changes that field (an HPA would move it with the machine's load).
      ...(o.livekit
        ? {
            roomProvider: 'livekit',
            livekit: { url: o.livekit.url, secretName: 'livekit', apiKeyKey: 'apiKey', apiSecretKey: 'apiSecret' },
            autoscaling: { enabled: false },
          }
        : {}),
      // Room for a live interview to finish while its pod drains.
      terminationGracePeriodSeconds: 120,
      podTLS: { secretName: 'pool-tls' },
      publicUrl: `https://${svc.hostname}:443`,
      models: { llm: { baseUrl: h.providersUrl }, stt: { baseUrl: h.providersUrl }, tts: { baseUrl: h.providersUrl } },
      telemetry: { otlpEndpoint: h.otlpUrl, serviceName: 'voice-worker-cluster' },
      extraEnv: [
        { name: 'VAD_SILENCE_MS', value: '600' },
        { name: 'OTEL_BSP_SCHEDULE_DELAY', value: '100' },
        { name: 'POOL_REVISION', value: o.revision },
      ],
      ...o.spec,
    },
  });
}

/** The pods' serving certificate (Secret 'pool-tls') from the host's throwaway CA, for the Service's names. */
export async function createPoolTlsSecret(k: KubeCli, host: HostSystem, svc: URL): Promise<void> {
  const cert = host.ca.issueServer('pool', [svc.hostname, `local.${POOL_NAMESPACE}.svc`, `local.${POOL_NAMESPACE}.svc.cluster.local`]);
  await k.kubectl(['create', 'secret', 'tls', 'pool-tls', '-n', POOL_NAMESPACE, `--cert=${cert.certFile}`, `--key=${cert.keyFile}`]);
}

export interface PoolSteps {
  /** The pool's ClusterIP Service address, as the host reaches it through kube-proxy. */
  serviceUrl(pool: string): Promise<URL>;
  /** The pool's pods (name, ready, not terminating). */
  poolPods(pool: string): Promise<PodSummary[]>;
  /** A session's transcript read from inside a pod's store (throws when that pod does not have it). */
  transcriptIn(pod: string, transcriptKey: string): Promise<{ sessionId: string; turns: Array<{ speaker: string }> }>;
  /** Ready=True on the pool. */
  waitReadyCondition(pool: string, timeoutMs?: number): Promise<void>;
  /**
   * Ready, and the rollout over: old pods gone too. A draining pod's warm slots stay in the shared Redis
   * pool until it leaves, and a local room lives on the pod whose slot was claimed.
   */
  waitPoolReady(pool: string, timeoutMs?: number): Promise<void>;
}

export function poolSteps(k: KubeCli): PoolSteps {
  const poolPods = async (pool: string): Promise<PodSummary[]> => {
    const list = await k.getJson<{
      items: Array<{ metadata: { name: string; deletionTimestamp?: string }; status: { conditions?: Condition[] } }>;
    }>(['pods', '-n', POOL_NAMESPACE, '-l', `app.kubernetes.io/instance=${pool}`]);
    return list.items.map((p) => ({
      name: p.metadata.name,
      ready: condition(p.status.conditions, 'Ready')?.status === 'True',
      terminating: Boolean(p.metadata.deletionTimestamp),
    }));
  };
  const waitReadyCondition = (pool: string, timeoutMs = 150_000): Promise<void> =>
    waitFor(
      async () =>
        condition((await k.getJson<PoolStatus>(['vwp', pool, '-n', POOL_NAMESPACE])).status?.conditions, 'Ready')?.status === 'True',
      { timeoutMs, intervalMs: 300, what: `the pool ${pool} to be Ready` },
    );
  return {
    async serviceUrl(pool) {
      const svc = await k.getJson<{ spec: { clusterIP: string; ports: Array<{ port: number }> } }>(['service', pool, '-n', POOL_NAMESPACE]);
      return new URL(`http://${svc.spec.clusterIP}:${svc.spec.ports[0]!.port}`);
    },
    poolPods,
    transcriptIn: async (pod, transcriptKey) =>
      JSON.parse(await k.kubectl(['exec', '-n', POOL_NAMESPACE, pod, '--', 'cat', fileURLToPath(transcriptKey)])),
    waitReadyCondition,
    async waitPoolReady(pool, timeoutMs = 150_000) {
      await k.kubectl(['rollout', 'status', `deployment/${pool}`, '-n', POOL_NAMESPACE, `--timeout=${Math.round(timeoutMs / 1000)}s`]);
      await waitReadyCondition(pool, timeoutMs);
      await waitFor(async () => (await poolPods(pool)).every((p) => p.ready && !p.terminating), {
        timeoutMs,
        intervalMs: 500,
        what: `the old pods of ${pool} to be gone`,
      });
    },
  };
}

/** `promise`, or a failure naming `what` after `timeoutMs`. */
export async function within<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>(
    (_, fail) => (timer = setTimeout(() => fail(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs)),
  );
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** An interview's end as the respondent saw it, for failure messages. */
export const lastSteps = (run: { steps: Array<{ kind: string; text: string }> }): string =>
  run.steps
    .slice(-6)
    .map((st) => `${st.kind}: ${st.text}`)
    .join('\n');

/** The session once the pod's outcome report reached the api-stub (it follows the room's end). */
export async function completedSession(
  host: HostSystem,
  run: { sessionId: string; steps: Array<{ kind: string; text: string }> },
): Promise<Session> {
  let session: Session | undefined;
  await waitFor(async () => (session = await host.system.retrieve(run.sessionId)).status === 'COMPLETED', {
    timeoutMs: 30_000,
    intervalMs: 200,
    what: `session ${run.sessionId} COMPLETED (last status ${session?.status}); the respondent saw:\n${lastSteps(run)}`,
  });
  return session!;
}
