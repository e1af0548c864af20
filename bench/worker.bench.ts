import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Redis } from 'ioredis';
import { silentLogger } from '../lib/log.ts';
import { BotProcess } from '../worker/bot/supervisor.ts';
import { loadConfig } from '../worker/config.ts';
import { RedisPool } from '../worker/pool.ts';
import { DailyBridge } from '../worker/rooms/daily/bridge-process.ts';
import { startWorker } from '../worker/worker.ts';
import { dailyPython } from '../test/fakes/daily-python.ts';
import { freePort } from '../test/harness/ports.ts';
import { startRedis } from '../test/harness/redis.ts';
import { call, spawnBody, startFakeBackend, WORKER_TOKEN } from '../test/worker/harness.ts';
import { machineLine, percentile, printTable, ratePerSecond, rssMiB } from './support.ts';

/**
 * The worker's hot paths, each beside a peer run in the same script:
 * 1. spawn latency (POST / to answer) with a warm pool, at rising concurrency, beside a bare
 *    Express route that does the same auth and JSON parse and one Redis GET (the floor);
 * 2. atomic slot claims per second (the Lua script) beside plain LPOPs on the same Redis;
 * 3. memory per idle slot (a prewarmed bot process) beside a bare node process.
 * Latency per turn is bench/turns.bench.ts (this bench's old section 4 spoke a tone, which today's
 * speech detector rightly does not hear as speech, and printed 0 turns).
 */
const fmt = (n: number, d = 1) => n.toFixed(d);

console.log(`${machineLine()} (shared machine: tails move with it)`);
const redisServer = await startRedis();
const redis = new Redis(redisServer.url);
const backend = await startFakeBackend();

// ---- 1. spawn latency --------------------------------------------------------------------------
const port = await freePort();
const prefix = `bench-${Date.now()}`;
const env = {
  WORKER_TOKEN,
  REDIS_URL: redisServer.url,
  BACKEND_URL: backend.url,
  OPENAI_API_KEY: 'sk-bench',
  ROOM_PROVIDER: 'local',
  WARM_POOL_SIZE: '0',
  PORT: String(port),
  METRICS_PORT: '0',
  REDIS_KEY_PREFIX: prefix,
  POD_NAME: 'bench-pod',
  HOST: '127.0.0.1',
};
const worker = await startWorker(loadConfig(env), { log: silentLogger, env: {} });
const pool = new RedisPool({ redis: redisServer.url, keyPrefix: prefix, commandTimeoutMs: 1000 });
while (!worker.ready()) await new Promise((r) => setTimeout(r, 20));
// Synthetic warm slots of a live pod with no bots: the spawn path is the same, nobody consumes the inbox.
const ghost = 'ghost-pod';
await pool.heartbeat(ghost, 600_000);
let slotSeq = 0;
const addSlots = async (n: number) => {
  for (let i = 0; i < n; i++) {
    const id = `${ghost}/${slotSeq++}`;
    await pool.registerIdle(
      ghost,
      {
        slotId: id,
        roomName: `rm_${id.replace('/', '_')}`,
        roomUrl: `ws://127.0.0.1:${port}/rooms/rm_${slotSeq}`,
        roomExp: Math.floor(Date.now() / 1000) + 86_400,
      },
      true,
    );
  }
};

const peer = express();
peer.post(
  '/',
  (req, res, next) => (req.headers.authorization === `Bearer ${WORKER_TOKEN}` ? next() : res.status(401).end()),
  express.json(),
  async (req, res) => {
    await redis.get(`${prefix}:peer:${String((req.body as { sessionId?: string }).sessionId)}`);
    res.json({ room_url: 'ws://x', token: 't' });
  },
);
const peerServer = peer.listen(0, '127.0.0.1');
await new Promise((r) => peerServer.once('listening', r));
const peerUrl = `http://127.0.0.1:${(peerServer.address() as AddressInfo).port}`;

const post = async (url: string): Promise<[number, number]> => {
  const t0 = performance.now();
  const res = await call(`${url}/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${WORKER_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(spawnBody()),
  });
  return [performance.now() - t0, res.status];
};

const spawnRows: Array<Array<string | number>> = [];
// Warm-up: JIT, connection pools and the script cache, not measured.
for (let i = 0; i < 3; i++) {
  await addSlots(20);
  await Promise.all(Array.from({ length: 20 }, () => post(`http://127.0.0.1:${port}`)));
  await Promise.all(Array.from({ length: 20 }, () => post(peerUrl)));
}
for (const concurrency of [1, 5, 10, 20]) {
  const rounds = Math.max(20, Math.floor(400 / concurrency));
  const ours: number[] = [];
  const theirs: number[] = [];
  for (let r = 0; r < rounds; r++) {
    await addSlots(concurrency);
    const answers = await Promise.all(Array.from({ length: concurrency }, () => post(`http://127.0.0.1:${port}`)));
    if (answers.some(([, status]) => status !== 200)) throw new Error(`spawn failed: ${answers.map((a) => a[1]).join(',')}`);
    ours.push(...answers.map(([ms]) => ms));
    theirs.push(...(await Promise.all(Array.from({ length: concurrency }, () => post(peerUrl)))).map(([ms]) => ms));
  }
  spawnRows.push([
    concurrency,
    ours.length,
    fmt(percentile(ours, 50), 2),
    fmt(percentile(ours, 99), 2),
    fmt(percentile(theirs, 50), 2),
    fmt(percentile(theirs, 99), 2),
  ]);
}
console.log('\n1. spawn latency, warm pool (ms; target p99 < 50 at 20 concurrent)');
printTable(['concurrent', 'spawns', 'p50', 'p99', 'peer p50', 'peer p99'], spawnRows);
await worker.close();
peerServer.close();

// ---- 2. claims per second ---------------------------------------------------------------------
const CLAIMS = 20_000;
await addSlots(CLAIMS);
const claimRate = (): Promise<number> =>
  ratePerSecond(CLAIMS, 32, (i) =>
    pool.claim({
      sessionId: `inv_claim${i}`,
      interviewId: 'dpl_b',
      spawnJson: '{}',
      nowSeconds: Math.floor(Date.now() / 1000),
      recordTtlSeconds: 600,
      minRoomSeconds: 60,
      traceId: '',
      spanId: '',
    }),
  );
const lpopRate = async (): Promise<number> => {
  const key = `${prefix}:peer:list`;
  for (let i = 0; i < CLAIMS; i += 1000) await redis.rpush(key, ...Array.from({ length: 1000 }, (_, j) => `s${i + j}`));
  return ratePerSecond(CLAIMS, 32, () => redis.lpop(key));
};
const claims = await claimRate();
const lpops = await lpopRate();
console.log('\n2. claims per second against Redis (32 in flight)');
printTable(
  ['operation', 'per second'],
  [
    ['claim script (atomic, idempotent)', Math.round(claims)],
    ['peer: plain LPOP', Math.round(lpops)],
  ],
);

// ---- 3. memory per idle slot -------------------------------------------------------------------
const botEnv = { ...process.env, ...env, WARM_POOL_SIZE: '1' };
const bots = Array.from({ length: 3 }, (_, i) => new BotProcess(`bench/${i}`, botEnv));
await Promise.all(bots.map((b) => new Promise<void>((r) => (b.once('ready', () => r()), b.start()))));
await new Promise((r) => setTimeout(r, 500));
const botRss = bots.map((b) => rssMiB(b.pid!));
const bare = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
const bareTsx = spawn(process.execPath, ['--import', 'tsx', '-e', 'setInterval(() => {}, 1000)']);
// A Daily bot's slot also holds its prewarmed bridge (real daily-python, not in a call).
const dailyBridge = new DailyBridge({ python: dailyPython() });
await dailyBridge.ready;
await new Promise((r) => setTimeout(r, 1500));
console.log('\n3. memory per idle slot (RSS, MiB)');
printTable(
  ['process', 'RSS'],
  [
    ['prewarmed bot (avg of 3)', fmt(botRss.reduce((a, b) => a + b, 0) / botRss.length)],
    ['+ its Daily bridge (ROOM_PROVIDER=daily)', fmt(rssMiB(dailyBridge.pid!))],
    ['peer: bare node', fmt(rssMiB(bare.pid!))],
    ['peer: node + tsx loader', fmt(rssMiB(bareTsx.pid!))],
  ],
);
bare.kill();
bareTsx.kill();
dailyBridge.kill();
await Promise.all(bots.map((b) => b.stop()));

await pool.close();
redis.disconnect();
await backend.close();
await redisServer.stop();
process.exit(0);
