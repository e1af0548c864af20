import { Redis } from 'ioredis';
import { startFakeOpenAI } from '../test/fakes/openai-compatible.ts';
import { freePort } from '../test/harness/ports.ts';
import { startRedis } from '../test/harness/redis.ts';
import { baseEnv, spawnBody, startFakeBackend, startWorkerProcess, waitIdleSlots, type WorkerProcess } from '../test/worker/harness.ts';
import { runRespondent } from '../test/worker/respondent.ts';
import { machineLine, printTable } from './support.ts';

/**
 * Soak: SOAK_SESSIONS interviews at once, back to back, for SOAK_SECONDS, on two worker replicas
 * sharing one persistent Redis, while three things break in the middle: the backend is down for
 * 25 s, one worker is killed with SIGKILL and restarted under the same POD_NAME, and Redis is
 * killed and restarted. Prints interviews started / completed / reported / lost (a started
 * interview whose outcome never reached the backend; must be 0) and the outcome backlog's peak and
 * drain time after the backend came back. Exits 1 when anything was lost.
 */
const SESSIONS = Number(process.env.SOAK_SESSIONS ?? 6);
const SECONDS = Number(process.env.SOAK_SECONDS ?? 150);
const SLOTS = Math.ceil(SESSIONS / 2);

console.log(`${machineLine()} (shared machine)`);
const [redisServer, openai, backend] = await Promise.all([
  startRedis({ persistent: true }),
  startFakeOpenAI({ voice: 'tone' }),
  startFakeBackend(),
]);
const redis = new Redis(redisServer.url, { maxRetriesPerRequest: 1 });
redis.on('error', () => undefined);
const prefix = `soak-${Date.now()}`;
const envOf = async (name: string) =>
  baseEnv({
    redisUrl: redisServer.url,
    backendUrl: backend.url,
    llmUrl: openai.url,
    REDIS_KEY_PREFIX: prefix,
    POD_NAME: name,
    PORT: String(await freePort()),
    METRICS_PORT: String(await freePort()),
    WARM_POOL_SIZE: String(SLOTS),
    HEARTBEAT_INTERVAL_MS: '500',
    JOIN_TIMEOUT_SECONDS: '30',
    IDLE_TIMEOUT_SECONDS: '20',
    REPORT_ATTEMPTS: '2',
    OUTCOME_RETRY_MAX_SECONDS: '2',
    OUTCOME_OUTBOX_POLL_MS: '500',
  });
const envs = [await envOf('soak-0'), await envOf('soak-1')];
const workers: WorkerProcess[] = await Promise.all(envs.map((e) => startWorkerProcess(e)));
await Promise.all(workers.map(async (w) => (await w.waitReady(), await waitIdleSlots(w, SLOTS, 60_000))));

const started = new Set<string>();
const completed = new Set<string>();
let peakBacklog = 0;
let backendBackAt: number | null = null;
let drainMs: number | null = null;
const events: string[] = [];
const t0 = Date.now();
const at = () => `${((Date.now() - t0) / 1000).toFixed(0)} s`;

const poll = setInterval(() => {
  void redis.zcard(`{${prefix}}:outbox`).then(
    (n) => {
      peakBacklog = Math.max(peakBacklog, n);
      if (backendBackAt !== null && drainMs === null && n === 0) drainMs = Date.now() - backendBackAt;
    },
    () => undefined,
  );
}, 250);

async function oneInterview(lane: number): Promise<void> {
  const body = spawnBody({}, 2);
  const id = String(body.sessionId);
  let spawned;
  for (;;) {
    const worker = workers[lane % workers.length]!;
    spawned = await worker.spawnSession(body).catch(() => null);
    if (spawned?.status === 200) break;
    await new Promise((r) => setTimeout(r, 500)); // no capacity, Redis away, or the worker restarting
  }
  started.add(id);
  const done = await runRespondent(String(spawned.body.room_url), String(spawned.body.token)).done.catch(() => null);
  if (done?.ended === 'completed') completed.add(id);
}

async function lane(i: number): Promise<void> {
  while (Date.now() - t0 < SECONDS * 1000) await oneInterview(i);
}

async function chaos(): Promise<void> {
  const wait = (fraction: number) => new Promise((r) => setTimeout(r, Math.max(0, t0 + SECONDS * 1000 * fraction - Date.now())));
  await wait(0.2);
  events.push(`${at()}: backend down for 25 s`);
  await backend.pause();
  await new Promise((r) => setTimeout(r, 25_000));
  await backend.resume();
  backendBackAt = Date.now();
  events.push(`${at()}: backend up`);
  await wait(0.45);
  events.push(`${at()}: kill -9 worker soak-0, restarted under the same POD_NAME`);
  await workers[0]!.stop();
  workers[0] = await startWorkerProcess(envs[0]!);
  await workers[0].waitReady(60_000);
  await wait(0.7);
  events.push(`${at()}: Redis killed and restarted`);
  await redisServer.restart();
}

await Promise.all([...Array.from({ length: SESSIONS }, (_, i) => lane(i)), chaos()]);
events.push(`${at()}: load stopped; waiting for the last reports`);
const reportedIds = () => new Set(backend.reports.map((r) => r.sessionId));
const deadline = Date.now() + 120_000;
while (Date.now() < deadline && [...started].some((id) => !reportedIds().has(id))) await new Promise((r) => setTimeout(r, 500));
clearInterval(poll);

const reported = reportedIds();
const completedReported = new Set(backend.reports.filter((r) => r.body.status === 'completed').map((r) => r.sessionId));
const lost = [...started].filter((id) => !reported.has(id) || (completed.has(id) && !completedReported.has(id)));
for (const e of events) console.log(e);
console.log(`\nsoak: ${SESSIONS} interviews at once for ${SECONDS} s on 2 replicas (${SLOTS} slots each)`);
printTable(
  ['started', 'completed', 'reported', 'reported completed', 'reported failed', 'lost', 'backlog peak', 'backlog drain after backend up'],
  [
    [
      started.size,
      completed.size,
      reported.size,
      completedReported.size,
      reported.size - completedReported.size,
      lost.length,
      peakBacklog,
      drainMs === null ? 'n/a' : `${(drainMs / 1000).toFixed(1)} s`,
    ],
  ],
);
if (lost.length) console.log(`lost: ${lost.join(', ')}`);

redis.disconnect();
await Promise.all(workers.map((w) => w.stop()));
await Promise.all([openai.close(), backend.close(), redisServer.stop()]);
process.exit(lost.length ? 1 : 0);
