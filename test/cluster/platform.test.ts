import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { runNodeInterview } from '../harness/node-interview.ts';
import { waitFor } from '../harness/ports.ts';
import { readWavPcm, speakWithPiper } from '../harness/speech.ts';
import { contentRecall } from '../harness/word-recall.ts';
import { INTERVIEW } from '../harness/system-env.ts';
import { startHostSystem, type HostSystem } from './host-system.ts';
import { addHostsEntry } from './hosts-file.ts';
import { startIngressEdge } from './ingress-edge.ts';
import { killWorkerProcess } from './kill-container.ts';
import { kubeCli, type KubeCli } from './kube-cli.ts';
import { loadPods } from './cpu-load.ts';
import { answerInterview, connectSession, openSession, watchBot } from './livekit-respondent-steps.ts';
import { startNodeLiveKit, type NodeLiveKit } from './node-livekit.ts';
import { runPageInterview } from './page-respondent.ts';
import { OPERATOR_NAMESPACE, poolManifest, POOL_NAMESPACE, RELEASE } from './pool-fixtures.ts';
import { podOf, poolRedis } from './pool-redis.ts';
import {
  completedSession as completedAt,
  condition,
  createPoolTlsSecret,
  installChart,
  installPoolNeighbours,
  interviewPoolManifest,
  poolSteps,
  within,
  type Condition,
  type PoolStatus as Pool,
} from './pool-steps.ts';

// Local rooms on several replicas need an address per pod (the operator refuses them otherwise);
// the HPA pool never runs an interview, so a name that resolves nowhere will do.
const PER_POD_ADDRESS = { publicUrl: 'https://$(POD_NAME).rooms.invalid' };
/** The public host name of the pool behind an Ingress (test 3b): resolved on this machine only. */
const EDGE_HOST = 'voice.cluster.test';
/** What the respondent says in test 3b, one answer per question, in the Piper voice. */
const EDGE_ANSWERS = [
  'I heard about the product from a colleague at a conference in Berlin.',
  'The reports are clear, but exporting them to spreadsheets takes too long.',
];

/**
 * What a platform team does with the product, on a real single-node Kubernetes (docs/cluster.md):
 * our chart, our operator image and our worker image, built from this working tree. The tests run
 * in order and build on each other (one cluster per run).
 */
interface Deployment {
  spec: { template: { spec: { serviceAccountName?: string } } };
  status?: { availableReplicas?: number; readyReplicas?: number };
}

const cluster = inject('cluster');
// kubectl and helm against the cluster (no I/O until called) and the steps shared with the bench.
const k: KubeCli = kubeCli(cluster);
const { serviceUrl, poolPods, transcriptIn, waitPoolReady } = poolSteps(k);
let host: HostSystem | undefined;
const workerToken = randomBytes(24).toString('base64url');

afterAll(async () => {
  await host?.stop();
});

const completedSession = (run: Parameters<typeof completedAt>[1]): ReturnType<typeof completedAt> => completedAt(host!, run);
/** The interview pool (pool-steps.ts), on local rooms with one replica or on LiveKit rooms. */
const interviewPool = (svc: URL, revision: string, livekit?: { url: string; replicas: number }): string =>
  interviewPoolManifest(cluster, host!, svc, { revision, livekit });

describe('on a real single-node cluster', () => {
  it('(1) helm installs the chart with our operator image and the CRD; the operator is available under the chart service account', async () => {
    await installChart(k, cluster);
    const crd = await k.getJson<{ status: { conditions: Condition[] } }>(['crd', 'voiceworkerpools.voice.service.io']);
    expect(condition(crd.status.conditions, 'Established')?.status).toBe('True');
    const deploy = await k.getJson<Deployment>(['deployment', RELEASE, '-n', OPERATOR_NAMESPACE]);
    expect(deploy.spec.template.spec.serviceAccountName).toBe(RELEASE);
    expect(deploy.status?.availableReplicas).toBe(2);
    // Leading needs the chart's RBAC (Leases): a holder proves the operator acts as that account.
    await waitFor(
      async () => {
        const lease = await k
          .getJson<{ spec: { holderIdentity?: string } }>(['lease', 'voice-operator-leader', '-n', OPERATOR_NAMESPACE])
          .catch(() => undefined);
        return Boolean(lease?.spec.holderIdentity?.startsWith(RELEASE));
      },
      { timeoutMs: 30_000, intervalMs: 500, what: 'an operator pod holding the leader Lease' },
    );
    const pods = await k.getJson<{ items: Array<{ spec: { serviceAccountName: string }; status: { phase: string } }> }>([
      'pods',
      '-n',
      OPERATOR_NAMESPACE,
      '-l',
      'app.kubernetes.io/name=voice-operator',
    ]);
    expect(pods.items.map((p) => [p.spec.serviceAccountName, p.status.phase])).toEqual([
      [RELEASE, 'Running'],
      [RELEASE, 'Running'],
    ]);
  }, 240_000);

  it('(2) a VoiceWorkerPool applied with kubectl is Ready only once its worker pods are available; kubectl get vwp shows the printer columns', async () => {
    await installPoolNeighbours(k, cluster, workerToken);
    await k.kubectl(['apply', '-f', '-'], poolManifest(cluster, { name: 'local', backendUrl: `http://${cluster.nodeIp}:9` }));
    // Watch both sides until Ready: Ready=True must never be seen while no worker is available.
    const seen: Array<{ ready: string; available: number }> = [];
    await waitFor(
      async () => {
        const pool = await k.getJson<Pool>(['vwp', 'local', '-n', POOL_NAMESPACE]);
        const deploy = await k.getJson<Deployment>(['deployment', 'local', '-n', POOL_NAMESPACE]).catch(() => undefined);
        const ready = condition(pool.status?.conditions, 'Ready')?.status ?? 'absent';
        seen.push({ ready, available: deploy?.status?.availableReplicas ?? 0 });
        return ready === 'True';
      },
      { timeoutMs: 150_000, intervalMs: 300, what: 'the pool local to be Ready' },
    );
    expect(seen[0]!.ready).not.toBe('True');
    expect(seen.filter((s) => s.ready === 'True' && s.available < 1)).toEqual([]);
    const table = await k.kubectl(['get', 'vwp', 'local', '-n', POOL_NAMESPACE]);
    const [header, row] = table
      .trim()
      .split('\n')
      .map((line) => line.trim().split(/\s+/));
    expect(header).toEqual(['NAME', 'READY', 'FLOOR', 'REASON', 'ENDPOINT', 'AGE']);
    expect(row!.slice(0, 4)).toEqual(['local', '1', '1', 'ReplicasReady']);
    expect(row![4]).toMatch(/^https?:\/\/local\.voice-pools\.svc/);
  }, 200_000);

  it('(3) the api-stub has the pool as the self-host endpoint: a Node respondent runs a whole interview through the pool Service', async () => {
    const svc = await serviceUrl('local');
    host = await startHostSystem(cluster.nodeIp, [svc.hostname, EDGE_HOST]);
    // The pods' serving certificate, from the throwaway CA the api-stub and the respondent trust.
    await createPoolTlsSecret(k, host, svc);
    // The pool now talks to the host's stand-in providers, OTLP receiver and api-stub; local rooms are
    // served at the Service's address (one replica), which the host reaches through kube-proxy.
    await k.kubectl(['apply', '-f', '-'], interviewPool(svc, 'v1'));
    await waitPoolReady('local');
    await host.setSelfHost(`https://${svc.hostname}:443/`, workerToken);

    const run = await runNodeInterview(host.system, { metadata: { source: 'cluster' } });
    expect(run.route).toBe('self_hosted');
    expect(run.roomUrl).toMatch(new RegExp(`^wss://${svc.hostname.replaceAll('.', '\\.')}(:443)?/rooms/`));
    const session = await completedSession(run);
    expect(session.response?.summary).toBeTruthy();
    const webhook = await host.waitForWebhook('interview.completed', run.sessionId);
    expect(webhook.event.data).toMatchObject({ sessionId: run.sessionId, metadata: { source: 'cluster' } });
    expect(host.rejected).toEqual([]);
    // The transcript is in the pod's store.
    const [pod] = await poolPods('local');
    const transcript = await transcriptIn(pod!.name, session.response!.transcriptKey);
    expect(transcript.sessionId).toBe(run.sessionId);
    expect(transcript.turns.filter((t) => t.speaker === 'respondent').length).toBeGreaterThanOrEqual(INTERVIEW.questions.length);
    await host.otlp.waitFor(
      (spans) =>
        ['session.start', 'llm.turn', 'tts.first_byte'].every((name) =>
          spans.some(
            (sp) =>
              sp.name === name && sp.attributes['session.id'] === run.sessionId && sp.resource['service.name'] === 'voice-worker-cluster',
          ),
        ),
      20_000,
      `session.start, llm.turn and tts.first_byte of ${run.sessionId} from the pool's pods`,
    );
  }, 300_000);

  it(
    "(3b) the spec's path and self-hosted speech: the api-stub calls the pool at its Ingress's HTTPS host name, a whole interview runs " +
      "through that TLS edge, and the pool's own speech server hears the respondent's words",
    async () => {
      // TLS ends at the edge (no podTLS): the Ingress's Secret holds a certificate for the public name.
      const cert = host!.ca.issueServer('edge', [EDGE_HOST]);
      await k.kubectl(['create', 'secret', 'tls', 'edge-tls', '-n', POOL_NAMESPACE, `--cert=${cert.certFile}`, `--key=${cert.keyFile}`]);
      await k.kubectl([
        'create',
        'secret',
        'generic',
        'speech',
        '-n',
        POOL_NAMESPACE,
        `--from-literal=token=${randomBytes(24).toString('base64url')}`,
      ]);
      // The respondent speaks with the Piper voice; the pool's speech server (in the cluster) transcribes it.
      const dir = mkdtempSync(join(tmpdir(), 'cluster-answers-'));
      const jobs = EDGE_ANSWERS.map((text, i) => ({ text, file: join(dir, `answer-${i}.wav`) }));
      speakWithPiper(jobs);
      const answers = jobs.map((job) => readWavPcm(job.file).pcm);
      const h = host!.forPods;
      const providerCallsBefore = host!.providers.requests.length;
      await k.kubectl(
        ['apply', '-f', '-'],
        poolManifest(cluster, {
          name: 'edge',
          backendUrl: h.backendUrl,
          spec: {
            ingress: { host: EDGE_HOST, tlsSecretName: 'edge-tls' },
            // Only the language model is outside the cluster (the host's stand-in); no speech keys.
            secrets: { workerToken: { name: 'worker' }, llmApiKey: { name: 'providers', key: 'llm' } },
            speech: {
              selfHosted: {
                tokenSecret: { name: 'speech' },
                autoscaling: { enabled: false },
                resources: { requests: { cpu: '250m', memory: '1Gi' }, limits: { cpu: '2', memory: '1536Mi' } },
              },
            },
            models: { llm: { baseUrl: h.providersUrl } },
            telemetry: { otlpEndpoint: h.otlpUrl, serviceName: 'voice-worker-cluster' },
            extraEnv: [{ name: 'VAD_SILENCE_MS', value: '600' }],
          },
        }),
      );
      await waitPoolReady('edge');
      expect((await k.getJson<Pool>(['vwp', 'edge', '-n', POOL_NAMESPACE])).status?.endpoint).toBe(`https://${EDGE_HOST}/`);
      // The speech Service answers through kube-proxy only a moment after its pod is available (the
      // node's rules lag the endpoints): wait for any answer, as the workers on this node will get.
      const speechSvc = await k.getJson<{ spec: { clusterIP: string } }>(['service', 'edge-speech', '-n', POOL_NAMESPACE]);
      await waitFor(
        async () =>
          (await fetch(`http://${speechSvc.spec.clusterIP}:7870/v1/models`, { signal: AbortSignal.timeout(2000) }).catch(
            () => undefined,
          )) !== undefined,
        { timeoutMs: 30_000, intervalMs: 250, what: 'the speech Service to answer' },
      );
      const restoreHosts = addHostsEntry(EDGE_HOST, '127.0.0.1');
      const edge = await startIngressEdge(k, POOL_NAMESPACE, 'edge', { address: '127.0.0.1', port: 443 });
      try {
        await edge.waitServing(host!.ca.certPem);
        await host!.setSelfHost(`https://${EDGE_HOST}/`, workerToken);
        const run = await runNodeInterview(host!.system, { metadata: { source: 'ingress' }, answers });
        expect(run.route).toBe('self_hosted');
        // The respondent's room is behind the same edge: the worker's public address is the Ingress host.
        expect(run.roomUrl).toMatch(new RegExp(`^wss://${EDGE_HOST.replaceAll('.', '\\.')}(:443)?/rooms/`));
        const session = await completedSession(run);
        const webhook = await host!.waitForWebhook('interview.completed', run.sessionId);
        expect(webhook.event.data).toMatchObject({ sessionId: run.sessionId, metadata: { source: 'ingress' } });
        const [pod] = await poolPods('edge');
        const transcript = (await transcriptIn(pod!.name, session.response!.transcriptKey)) as {
          sessionId: string;
          turns: Array<{ speaker: string; text: string }>;
        };
        expect(transcript.sessionId).toBe(run.sessionId);
        // The respondent's words, recognised inside the cluster: no speech request left it.
        const heard = transcript.turns.filter((t) => t.speaker === 'respondent').map((t) => t.text);
        // However the turns fell (a follow-up, an answer split at a pause), every answer's words are there.
        expect(contentRecall(EDGE_ANSWERS.join(' '), heard.join(' ')), JSON.stringify(heard)).toBeGreaterThanOrEqual(0.8);
        const calls = host!.providers.requests.slice(providerCallsBefore);
        expect(
          calls.filter((r) => r.endpoint !== 'chat'),
          'speech requests that reached the host',
        ).toEqual([]);
        expect(calls.some((r) => r.endpoint === 'chat')).toBe(true);
      } catch (err) {
        // What the worker and the speech server said, for the failure message.
        const logs = async (what: string) =>
          k.kubectl(['logs', '-n', POOL_NAMESPACE, what, '--tail=40', '--all-containers']).catch((e: unknown) => String(e));
        throw new Error(
          `${(err as Error).message}\n--- worker:\n${await logs('deploy/edge')}\n--- speech server:\n${await logs('deploy/edge-speech')}`,
          { cause: err },
        );
      } finally {
        await host!.setSelfHost(`https://${(await serviceUrl('local')).hostname}:443/`, workerToken);
        await edge.close();
        restoreHosts();
        await k.kubectl(['delete', 'vwp', 'edge', '-n', POOL_NAMESPACE, '--wait=false']);
        rmSync(dir, { recursive: true, force: true });
      }
    },
    480_000,
  );

  it('(4) a rolling upgrade while an interview is live: the live interview completes on the old pod, the next one runs on the new pod', async () => {
    const svc = await serviceUrl('local');
    const [oldPod] = await poolPods('local');
    let botSpoke!: () => void;
    const spoke = new Promise<void>((r) => (botSpoke = r));
    const live = runNodeInterview(host!.system, { metadata: { source: 'rolling' }, onStep: (st) => st.kind === 'caption' && botSpoke() });
    await spoke;
    await k.kubectl(['apply', '-f', '-'], interviewPool(svc, 'v2'));
    const run = await live;
    await completedSession(run);
    await host!.waitForWebhook('interview.completed', run.sessionId);
    await waitPoolReady('local');
    await waitFor(async () => (await poolPods('local')).every((p) => p.name !== oldPod!.name), {
      timeoutMs: 60_000,
      intervalMs: 500,
      what: 'the old pod to be gone',
    });
    const [newPod] = await poolPods('local');
    const next = await runNodeInterview(host!.system, { metadata: { source: 'after-rolling' } });
    const session = await completedSession(next);
    expect((await transcriptIn(newPod!.name, session.response!.transcriptKey)).sessionId).toBe(next.sessionId);
  }, 300_000);

  it(
    '(8) the HPA made by the operator (70 % CPU, the floor) reads CPU from metrics-server: loaded pods scale the pool up past its floor, ' +
      'and with the load gone it comes back down to the floor',
    async () => {
      // A short scale-down window through the pool's spec, so the way back down takes a minute, not five.
      const autoscaling = { maxReplicas: 3, scaleDown: { stabilizationWindowSeconds: 30 } };
      await k.kubectl(
        ['apply', '-f', '-'],
        poolManifest(cluster, {
          name: 'scaled',
          backendUrl: `http://${cluster.nodeIp}:9`,
          spec: { ...PER_POD_ADDRESS, autoscaling, sizing: { p95ConcurrentSessions: 2, headroomPercent: 0 } },
        }),
      );
      interface Hpa {
        spec: {
          minReplicas: number;
          maxReplicas: number;
          metrics: Array<{ resource: { name: string; target: { averageUtilization: number } } }>;
          behavior?: { scaleDown?: { stabilizationWindowSeconds?: number } };
        };
        status?: {
          conditions?: Condition[];
          currentReplicas?: number;
          desiredReplicas?: number;
          currentMetrics?: Array<{ resource?: { current?: { averageUtilization?: number } } }>;
        };
      }
      const readHpa = (): Promise<Hpa> => k.getJson<Hpa>(['hpa', 'scaled', '-n', POOL_NAMESPACE]);
      const replicas = async (): Promise<number | undefined> =>
        (await k.getJson<{ spec: { replicas?: number } }>(['deployment', 'scaled', '-n', POOL_NAMESPACE])).spec.replicas;
      const utilization = (hpa: Hpa | undefined): number | undefined =>
        hpa?.status?.currentMetrics?.[0]?.resource?.current?.averageUtilization;
      const described = (hpa: Hpa | undefined): string =>
        `replicas ${hpa?.status?.currentReplicas} -> ${hpa?.status?.desiredReplicas}, CPU ${utilization(hpa)} %, ` +
        `conditions ${JSON.stringify(hpa?.status?.conditions?.map((c) => [c.type, c.status, c.reason]))}`;
      let hpa: Hpa | undefined;
      // Settled before any load: the controller reads CPU (metrics-server answers for every pod) and
      // keeps the pool at its floor of 2, so the scale-up below is ours, not a start-up burst's.
      await waitFor(
        async () => {
          hpa = await readHpa().catch(() => undefined);
          const u = utilization(hpa);
          return (
            condition(hpa?.status?.conditions, 'ScalingActive')?.status === 'True' &&
            hpa?.status?.currentReplicas === 2 &&
            hpa.status.desiredReplicas === 2 &&
            u !== undefined &&
            u < 70 &&
            (await poolPods('scaled')).filter((p) => p.ready && !p.terminating).length === 2
          );
        },
        { timeoutMs: 240_000, intervalMs: 1000, what: 'the HPA scaled to read CPU and hold the floor of 2 with two ready pods' },
      ).catch((err: unknown) => {
        throw new Error(`${(err as Error).message}; last: ${described(hpa)}`, { cause: err });
      });
      expect(hpa!.spec.minReplicas).toBe(2);
      expect(hpa!.spec.maxReplicas).toBe(3);
      expect(hpa!.spec.metrics).toEqual([
        expect.objectContaining({ resource: { name: 'cpu', target: expect.objectContaining({ averageUtilization: 70 }) } }),
      ]);
      expect(hpa!.spec.behavior?.scaleDown?.stabilizationWindowSeconds).toBe(30);
      expect(condition(hpa!.status!.conditions, 'ScalingActive')!.reason).toBe('ValidMetricFound');
      // The HPA owns the replica count: the floor is on the Deployment.
      expect(await replicas()).toBe(2);

      // Each of the two pods spins a core: far above the 70 % of its 100m request.
      const loaded = (await poolPods('scaled')).map((p) => p.name);
      const load = loadPods(k, POOL_NAMESPACE, loaded);
      try {
        // The Deployment at 3, and the HPA's status written by the pass that scaled it (load still on).
        await waitFor(async () => (await replicas()) === 3 && (hpa = await readHpa()).status?.currentReplicas === 3, {
          timeoutMs: 300_000,
          intervalMs: 1000,
          what: 'the HPA to scale the loaded pool up to 3',
        }).catch(async (err: unknown) => {
          throw new Error(`${(err as Error).message}; last: ${described(await readHpa().catch(() => undefined))}`, { cause: err });
        });
        expect(utilization(hpa)).toBeGreaterThan(70);
      } finally {
        await load.stop();
      }
      await waitFor(async () => (await poolPods('scaled')).filter((p) => p.ready && !p.terminating).length === 3, {
        timeoutMs: 180_000,
        intervalMs: 1000,
        what: 'the third pod of scaled to be ready',
      });

      // Load gone: once the window has passed, back down to the floor, and not below it.
      await waitFor(async () => (await replicas()) === 2 && (hpa = await readHpa()).status?.currentReplicas === 2, {
        timeoutMs: 300_000,
        intervalMs: 1000,
        what: 'the HPA to scale the idle pool back down to its floor of 2',
      }).catch(async (err: unknown) => {
        throw new Error(`${(err as Error).message}; last: ${described(await readHpa().catch(() => undefined))}`, { cause: err });
      });
      expect(hpa!.status?.desiredReplicas).toBe(2);
      expect(utilization(hpa)).toBeLessThan(70);
      expect(hpa!.spec.minReplicas).toBe(2);
    },
    900_000,
  );

  it('(7) the operator leader pod is deleted: the standby takes over and reconciles a pool change made meanwhile', async () => {
    const holder = async (): Promise<string | undefined> =>
      (await k.getJson<{ spec: { holderIdentity?: string } }>(['lease', 'voice-operator-leader', '-n', OPERATOR_NAMESPACE])).spec
        .holderIdentity;
    const leader = await holder();
    expect(leader).toMatch(/^voice-operator-/);
    // The holder identity is "<pod name>_<random>".
    await k.kubectl(['delete', 'pod', leader!.split('_')[0]!, '-n', OPERATOR_NAMESPACE, '--wait=false']);
    // Changed while no one leads (or the old leader is stopping): only the new leader can apply it.
    await k.kubectl(
      ['apply', '-f', '-'],
      poolManifest(cluster, {
        name: 'scaled',
        backendUrl: `http://${cluster.nodeIp}:9`,
        spec: {
          ...PER_POD_ADDRESS,
          autoscaling: { maxReplicas: 3, targetCPUUtilizationPercentage: 55 },
          sizing: { p95ConcurrentSessions: 2, headroomPercent: 0 },
        },
      }),
    );
    await waitFor(
      async () => {
        const now = await holder().catch(() => undefined);
        return now !== undefined && now !== leader;
      },
      { timeoutMs: 60_000, intervalMs: 500, what: 'another operator pod to take the leader Lease' },
    );
    await waitFor(
      async () => {
        const hpa = await k.getJson<{ spec: { metrics: Array<{ resource: { target: { averageUtilization: number } } }> } }>([
          'hpa',
          'scaled',
          '-n',
          POOL_NAMESPACE,
        ]);
        return hpa.spec.metrics[0]!.resource.target.averageUtilization === 55;
      },
      { timeoutMs: 60_000, intervalMs: 500, what: 'the new leader to reconcile the HPA target of 55 %' },
    );
    await waitFor(
      async () => {
        const pool = await k.getJson<{ metadata: { generation: number }; status?: { observedGeneration?: number } }>([
          'vwp',
          'scaled',
          '-n',
          POOL_NAMESPACE,
        ]);
        return pool.status?.observedGeneration === pool.metadata.generation;
      },
      { timeoutMs: 30_000, intervalMs: 500, what: 'the pool status to report the new generation' },
    );
  }, 150_000);

  describe('the interview pool on LiveKit rooms with two replicas (a livekit-server on the host)', () => {
    let livekit: NodeLiveKit | undefined;
    const redis = () => poolRedis(k, 'local');

    afterAll(async () => {
      await livekit?.stop();
    });

    /** Both replicas Ready and each one's warm slot (its LiveKit room created ahead) in the shared pool. */
    async function twoWarmReplicas(): Promise<void> {
      await waitPoolReady('local');
      await waitFor(async () => (await poolPods('local')).length === 2 && (await redis().idle()).length === 2, {
        timeoutMs: 90_000,
        intervalMs: 500,
        what: 'two pods of local, each with its warm slot in the pool',
      });
    }

    it('(5) scale-down while a session is live: the draining pod finishes it (COMPLETED, webhook verified)', async () => {
      // The HPA pool of (8) and (7) has done its part; the two cores are needed for WebRTC now.
      await k.kubectl(['delete', 'vwp', 'scaled', '-n', POOL_NAMESPACE, '--wait=false']);
      livekit = await startNodeLiveKit(cluster.nodeIp);
      await k.kubectl([
        'create',
        'secret',
        'generic',
        'livekit',
        '-n',
        POOL_NAMESPACE,
        `--from-literal=apiKey=${livekit.apiKey}`,
        `--from-literal=apiSecret=${livekit.apiSecret}`,
      ]);
      const svc = await serviceUrl('local');
      await k.kubectl(['apply', '-f', '-'], interviewPool(svc, 'livekit', { url: livekit.url, replicas: 2 }));
      await twoWarmReplicas();

      const sessionId = await openSession(host!.system, { source: 'scale-down' });
      const room = await connectSession(host!.system, sessionId);
      expect(room.route).toBe('self_hosted');
      expect(room.roomUrl).toBe(livekit.url);
      let botSpoke!: () => void;
      const spoke = new Promise<void>((r) => (botSpoke = r));
      let finished = false;
      const answering = answerInterview(room, (line) => line.startsWith('caption bot:') && botSpoke()).finally(() => (finished = true));
      await within(
        Promise.race([spoke, answering.then(() => Promise.reject(new Error('the interview ended before the bot spoke')))]),
        60_000,
        'the bot to speak',
      );

      const busyPod = podOf((await redis().session(sessionId)).pod!);
      const pods = await poolPods('local');
      expect(pods.map((p) => p.name)).toContain(busyPod);
      // The ReplicaSet removes the pod with the lowest deletion cost: make that the busy one (the worst case).
      await k.kubectl(['annotate', 'pod', busyPod, '-n', POOL_NAMESPACE, 'controller.kubernetes.io/pod-deletion-cost=-1000']);
      await k.kubectl(['apply', '-f', '-'], interviewPool(svc, 'livekit', { url: livekit.url, replicas: 1 }));
      await waitFor(async () => (await poolPods('local')).find((p) => p.name === busyPod)?.terminating === true, {
        timeoutMs: 30_000,
        intervalMs: 300,
        what: `the busy pod ${busyPod} to be terminating`,
      });
      expect(finished).toBe(false);

      const result = await answering;
      expect(result.disconnectedBy).toBe('ended');
      const session = await completedSession({
        sessionId,
        steps: result.captions.map((c) => ({ kind: 'caption', text: `${c.speaker}: ${c.text}` })),
      });
      expect(session.response?.summary).toBeTruthy();
      const webhook = await host!.waitForWebhook('interview.completed', sessionId);
      expect(webhook.event.data).toMatchObject({ sessionId, metadata: { source: 'scale-down' } });
      expect(host!.rejected).toEqual([]);
      // Drained, the pod leaves; the other one stays and the pool is Ready at one replica.
      await waitFor(async () => (await poolPods('local')).every((p) => p.name !== busyPod), {
        timeoutMs: 60_000,
        intervalMs: 500,
        what: `the drained pod ${busyPod} to be gone`,
      });
      expect((await poolPods('local')).map((p) => p.name)).toEqual(pods.filter((p) => p.name !== busyPod).map((p) => p.name));
      await waitPoolReady('local');
    }, 300_000);

    it('(6) a worker process killed (kill -9) mid-interview: interview.failed, the slot reclaimed, the retry completes on another pod', async () => {
      const svc = await serviceUrl('local');
      await k.kubectl(['apply', '-f', '-'], interviewPool(svc, 'livekit', { url: livekit!.url, replicas: 2 }));
      await twoWarmReplicas();

      const sessionId = await openSession(host!.system, { source: 'killed' });
      const watched = await watchBot(await connectSession(host!.system, sessionId));
      await within(watched.botSpoke, 60_000, 'the bot to speak');
      const { pod: instance, slot } = await redis().session(sessionId);
      const victim = podOf(instance!);
      const killed = await killWorkerProcess(cluster, k, victim);

      const failed = await host!.waitForWebhook('interview.failed', sessionId, 90_000);
      expect(failed.event.data).toMatchObject({ sessionId, reason: 'worker_lost', metadata: { source: 'killed' } });
      // What the respondent sees: the interviewer gone without ending the interview; the replica that
      // reaps the session deletes its room, unless the server noticed the bot's departure first.
      await within(watched.botLeft, 60_000, `the respondent to see the bot leave or the room end (seen: ${watched.seen.join(', ')})`);
      expect(['room_deleted', 'participant_left']).toContain(watched.howLeft());
      await watched.leave();
      // A failed interview leaves the session STARTED, for the respondent to retry.
      expect((await host!.system.retrieve(sessionId)).status).toBe('STARTED');
      // The slot is reclaimed: the dead incarnation and its slot left the pool.
      expect(await redis().pods()).not.toContain(instance);
      expect(await redis().podSlots(instance!)).toEqual([]);
      expect(await redis().slotExists(slot!)).toBe(false);
      // The container came back (a new incarnation) and both pods have a warm slot again.
      await waitFor(
        async () => {
          const p = await k.getJson<{ status: { containerStatuses?: Array<{ restartCount: number; ready: boolean }> } }>([
            'pod',
            victim,
            '-n',
            POOL_NAMESPACE,
          ]);
          const c = p.status.containerStatuses?.[0];
          return c !== undefined && c.restartCount > killed.restartsBefore && c.ready;
        },
        { timeoutMs: 90_000, intervalMs: 500, what: `the worker container of ${victim} to restart` },
      );
      await twoWarmReplicas();

      // The respondent presses Retry: a fresh slot on the other pod, and the interview completes.
      const retry = await connectSession(host!.system, sessionId);
      const retryPod = podOf((await redis().session(sessionId)).pod!);
      expect(retryPod).not.toBe(victim);
      const result = await answerInterview(retry);
      expect(result.disconnectedBy).toBe('ended');
      const session = await completedSession({
        sessionId,
        steps: result.captions.map((c) => ({ kind: 'caption', text: `${c.speaker}: ${c.text}` })),
      });
      await host!.waitForWebhook('interview.completed', sessionId);
      expect((await transcriptIn(retryPod, session.response!.transcriptKey)).sessionId).toBe(sessionId);
      expect(host!.rejected).toEqual([]);
    }, 300_000);

    it(
      '(3, the page) a respondent on the api-stub respondent page in Chromium runs a whole interview through the pool: COMPLETED at the ' +
        'page and in the api-stub, webhook verified, transcript stored, spans',
      async () => {
        await twoWarmReplicas();
        const created = await host!.system.server.sessions.create({ interviewId: host!.system.interviewId, metadata: { source: 'page' } });
        // The link a respondent gets: the api-stub's page, which asks for a room (connect) and joins it.
        const run = await runPageInterview(created.sessionUrl);
        const sessionId = created.sessionId;
        expect(run.state).toBe('finished');
        expect(run.marks).toContain('connect:done:self_hosted');
        expect(run.marks).toContain('bot:first_audio');
        expect(run.marks.filter((m) => m.startsWith('ended:') || m.startsWith('error:'))).toEqual(['ended:completed']);
        for (const q of INTERVIEW.questions) expect(run.captions).toContain(q.text);
        const session = await completedSession({ sessionId, steps: run.captions.map((text) => ({ kind: 'caption', text })) });
        expect(session.clickedAt).not.toBeNull();
        expect(session.response?.summary).toBeTruthy();
        const webhook = await host!.waitForWebhook('interview.completed', sessionId);
        expect(webhook.event.data).toMatchObject({ sessionId, metadata: { source: 'page' } });
        expect(host!.rejected).toEqual([]);
        // The transcript is in the store of exactly one of the pool's pods: the one whose bot ran it.
        const stored = [];
        for (const pod of await poolPods('local')) {
          const transcript = await transcriptIn(pod.name, session.response!.transcriptKey).catch(() => undefined);
          if (transcript) stored.push(transcript);
        }
        expect(stored.map((t) => t.sessionId)).toEqual([sessionId]);
        expect(stored[0]!.turns.filter((t) => t.speaker === 'respondent').length).toBeGreaterThanOrEqual(INTERVIEW.questions.length);
        await host!.otlp.waitFor(
          (spans) =>
            ['session.start', 'room.connect', 'llm.turn', 'tts.first_byte'].every((name) =>
              spans.some(
                (sp) =>
                  sp.name === name && sp.attributes['session.id'] === sessionId && sp.resource['service.name'] === 'voice-worker-cluster',
              ),
            ),
          20_000,
          `session.start, room.connect, llm.turn and tts.first_byte of ${sessionId} from the pool's pods`,
        );
        const connect = host!.otlp.spans.find((sp) => sp.name === 'room.connect' && sp.attributes['session.id'] === sessionId)!;
        expect(connect.attributes['room.provider']).toBe('livekit');
      },
      300_000,
    );
  });
});
