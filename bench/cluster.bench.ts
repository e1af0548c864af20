/**
 * The single-node test cluster (docs/cluster.md), measured as a platform team meets it:
 * - cluster up (scripts/cluster.sh up with the binaries cached; which images it had to rebuild);
 * - helm install of the chart until the operator's Deployment is available;
 * - a VoiceWorkerPool applied until it is Ready;
 * - spawn latency (POST / with the worker token) over real HTTP to the pool's Service address from the
 *   host, 20 at once, against real warm slots (two replicas of ten);
 * - live interviews lost during a rolling upgrade: several Node respondents in local rooms on the
 *   interview pool while an env change rolls it (must be 0).
 * Uses the cluster tests' helpers (test/cluster/*); needs root; always takes the cluster down.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { runNodeInterview, type NodeInterview } from '../test/harness/node-interview.ts';
import { waitFor } from '../test/harness/ports.ts';
import { spawnBody } from '../test/worker/harness.ts';
import {
  CLUSTER_SCRIPT,
  imagesBuilt,
  imagesImported,
  parseClusterEnv,
  runClusterScript,
  type ClusterInfo,
} from '../test/cluster/cluster-script.ts';
import { startHostSystem, type HostSystem } from '../test/cluster/host-system.ts';
import { kubeCli, type KubeCli } from '../test/cluster/kube-cli.ts';
import { poolManifest, POOL_NAMESPACE } from '../test/cluster/pool-fixtures.ts';
import { poolRedis } from '../test/cluster/pool-redis.ts';
import {
  completedSession,
  createPoolTlsSecret,
  installChart,
  installPoolNeighbours,
  interviewPoolManifest,
  poolSteps,
  within,
} from '../test/cluster/pool-steps.ts';
import { fmt, machineLine, ms, percentile, printTable, timeIt } from './support.ts';

const CONCURRENT = 20;
/** Warm slots of the spawn pool: two replicas of ten, one for each of the 20 concurrent spawns. */
const WARM_SLOTS = 20;
const SPAWN_CPU_REQUEST = '500m';
const SPAWN_ROUNDS = Number(process.env.BENCH_SPAWN_ROUNDS ?? 5);
const LIVE_INTERVIEWS = Number(process.env.BENCH_ROLLING_INTERVIEWS ?? 4);
const workerToken = randomBytes(24).toString('base64url');
const seconds = (msValue: number): string => `${fmt(msValue / 1000, 1)} s`;

/** Real warm slots for 20 spawns at once: two replicas of ten; an unjoined claim frees its bot in 5 s. */
function spawnPool(cluster: ClusterInfo): string {
  return poolManifest(cluster, {
    name: 'spawn',
    replicas: 2,
    backendUrl: `http://${cluster.nodeIp}:9`,
    spec: {
      publicUrl: 'https://$(POD_NAME).rooms.invalid',
      autoscaling: { enabled: false },
      sizing: { p95ConcurrentSessions: 0, headroomPercent: 0, sessionsPerReplica: WARM_SLOTS / 2 },
      // The request sets the pods' CPU weight against everything else on the node's two cores.
      resources: { requests: { cpu: SPAWN_CPU_REQUEST, memory: '256Mi' }, limits: { cpu: '2', memory: '2Gi' } },
      extraEnv: [{ name: 'JOIN_TIMEOUT_SECONDS', value: '5' }],
    },
  });
}

/**
 * Spawns through the Service, `concurrent` callers at a time, each making WARM_SLOTS / `concurrent` in a
 * row, over `rounds` rounds that each start with the warm pool full (round 0 warms connections and the
 * pods' JIT and is not counted).
 */
async function spawnLatency(k: KubeCli, svc: URL, concurrent: number, rounds: number): Promise<{ samples: number[]; statuses: number[] }> {
  const idle = (): Promise<string[]> => poolRedis(k, 'spawn').idle();
  const spawnOnce = async (): Promise<[number, number]> => {
    const t0 = performance.now();
    const res = await fetch(`${svc.origin}/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${workerToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(spawnBody()),
    });
    await res.text();
    return [performance.now() - t0, res.status];
  };
  const caller = async (): Promise<Array<[number, number]>> => {
    const out: Array<[number, number]> = [];
    for (let i = 0; i < WARM_SLOTS / concurrent; i++) out.push(await spawnOnce());
    return out;
  };
  const samples: number[] = [];
  const statuses: number[] = [];
  for (let round = 0; round <= rounds; round++) {
    await waitFor(async () => (await idle()).length >= WARM_SLOTS, {
      timeoutMs: 180_000,
      intervalMs: 500,
      what: `${WARM_SLOTS} warm slots in the pool spawn`,
    });
    const answers = (await Promise.all(Array.from({ length: concurrent }, caller))).flat();
    if (round === 0) continue;
    samples.push(...answers.map(([t]) => t));
    statuses.push(...answers.map(([, status]) => status));
  }
  return { samples, statuses };
}

/** `LIVE_INTERVIEWS` Node respondents live on the interview pool while an env change rolls it. */
async function rollingUpgrade(
  k: KubeCli,
  cluster: ClusterInfo,
  host: HostSystem,
  svc: URL,
): Promise<{ completed: number; lost: string[]; rolloutMs: number }> {
  const steps = poolSteps(k);
  const pool = (revision: string): string =>
    interviewPoolManifest(cluster, host, svc, {
      revision,
      spec: {
        sizing: { p95ConcurrentSessions: 0, headroomPercent: 0, sessionsPerReplica: LIVE_INTERVIEWS },
        resources: { requests: { cpu: '100m', memory: '256Mi' }, limits: { cpu: '2', memory: '2Gi' } },
      },
    });
  await k.kubectl(['apply', '-f', '-'], pool('v1'));
  await steps.waitPoolReady('local', 240_000);
  await waitFor(async () => (await poolRedis(k, 'local').idle()).length >= LIVE_INTERVIEWS, {
    timeoutMs: 120_000,
    intervalMs: 500,
    what: `${LIVE_INTERVIEWS} warm slots in the pool local`,
  });

  const spoke: Array<Promise<void>> = [];
  const runs = Array.from({ length: LIVE_INTERVIEWS }, (_, i) => {
    let botSpoke!: () => void;
    spoke.push(new Promise<void>((r) => (botSpoke = r)));
    return runNodeInterview(host.system, { metadata: { bench: 'rolling', i }, onStep: (st) => st.kind === 'caption' && botSpoke() });
  });
  // Judged below; handled here so that an early failure cannot end the process before the cluster is down.
  for (const run of runs) run.catch(() => undefined);
  // Every interview is live (its bot has spoken) before the rollout starts.
  await within(Promise.all(spoke), 90_000, 'every bot to speak');
  const rolloutStart = performance.now();
  await k.kubectl(['apply', '-f', '-'], pool('v2'));
  const outcomes = await Promise.allSettled(
    runs.map(async (run): Promise<NodeInterview> => {
      const done = await run;
      await completedSession(host, done);
      await host.waitForWebhook('interview.completed', done.sessionId);
      return done;
    }),
  );
  await steps.waitPoolReady('local', 240_000);
  const rolloutMs = performance.now() - rolloutStart;
  const lost = outcomes.flatMap((o) => (o.status === 'rejected' ? [String((o.reason as Error).message).split('\n')[0]!] : []));
  if (host.rejected.length > 0) lost.push(`webhooks that did not verify: ${host.rejected.join(', ')}`);
  return { completed: outcomes.length - lost.length, lost, rolloutMs };
}

async function main(): Promise<void> {
  console.log(machineLine());
  if (process.getuid?.() !== 0) throw new Error('the cluster bench needs root (containerd, bridges, iptables, sysctls)');
  // An interrupted bench still puts the machine back.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      spawnSync('bash', [CLUSTER_SCRIPT, 'down'], { stdio: 'inherit' });
      process.exit(130);
    });
  }
  const upStart = performance.now();
  const up = await runClusterScript('up');
  const upMs = performance.now() - upStart;
  const rebuilt = imagesBuilt(up.stderr);
  const imported = imagesImported(up.stderr);
  const cluster = parseClusterEnv(up.stdout);
  let host: HostSystem | undefined;
  try {
    const k = kubeCli(cluster);
    const steps = poolSteps(k);
    const helmMs = await timeIt(() => installChart(k, cluster));
    await installPoolNeighbours(k, cluster, workerToken);
    const poolMs = await timeIt(async () => {
      await k.kubectl(['apply', '-f', '-'], poolManifest(cluster, { name: 'local', backendUrl: `http://${cluster.nodeIp}:9` }));
      await steps.waitReadyCondition('local', 240_000);
    });

    await k.kubectl(['apply', '-f', '-'], spawnPool(cluster));
    await steps.waitPoolReady('spawn', 240_000);
    const spawnSvc = await steps.serviceUrl('spawn');
    const spawns = await spawnLatency(k, spawnSvc, CONCURRENT, SPAWN_ROUNDS);
    const sequential = await spawnLatency(k, spawnSvc, 1, 1);
    const failed = [...spawns.statuses, ...sequential.statuses].filter((s) => s !== 200);
    // Its bots leave the two cores to the interviews.
    await k.kubectl(['delete', 'vwp', 'spawn', '-n', POOL_NAMESPACE, '--wait=false']);

    const svc = await steps.serviceUrl('local');
    host = await startHostSystem(cluster.nodeIp, svc.hostname);
    await createPoolTlsSecret(k, host, svc);
    await host.setSelfHost(`https://${svc.hostname}:443/`, workerToken);
    const rolling = await rollingUpgrade(k, cluster, host, svc);

    const list = (xs: Array<{ image: string; seconds: number }>): string => xs.map((x) => `${x.image} ${x.seconds} s`).join(', ');
    const images = rebuilt.length === 0 ? 'no image rebuilt' : `rebuilt: ${list(rebuilt)}; imported into containerd: ${list(imported)}`;
    console.log(`\nthe single-node cluster (docs/cluster.md): binaries cached; ${images}`);
    printTable(
      ['measure', 'value'],
      [
        [`cluster up (scripts/cluster.sh up; ${images})`, seconds(upMs)],
        ['helm install -> operator Deployment available', seconds(helmMs)],
        ['VoiceWorkerPool applied -> Ready (1 replica)', seconds(poolMs)],
        [
          `spawn p50 through the Service, ${CONCURRENT} concurrent (${spawns.samples.length} spawns; 2 replicas of ` +
            `10 warm slots, ${SPAWN_CPU_REQUEST} CPU requested each)`,
          ms(percentile(spawns.samples, 50)),
        ],
        [`spawn p99 through the Service, ${CONCURRENT} concurrent`, ms(percentile(spawns.samples, 99))],
        [
          `for comparison: spawn p50 / p99 one at a time (${sequential.samples.length} spawns)`,
          `${ms(percentile(sequential.samples, 50))} / ${ms(percentile(sequential.samples, 99))}`,
        ],
        ['spawns not answered 200', failed.length === 0 ? '0' : `${failed.length} (${[...new Set(failed)].join(', ')})`],
        [`live interviews lost during a rolling upgrade (env change, ${LIVE_INTERVIEWS} live)`, String(rolling.lost.length)],
        ['rolling upgrade: env change applied -> new pod Ready, old pod gone', seconds(rolling.rolloutMs)],
      ],
    );
    for (const why of rolling.lost) console.log(`lost: ${why}`);
    console.log(`at the end: ${machineLine()}`);
    if (rolling.lost.length > 0 || failed.length > 0) process.exitCode = 1;
  } finally {
    await host?.stop();
    await runClusterScript('down');
  }
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
