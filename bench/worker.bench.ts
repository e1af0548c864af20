import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Redis } from 'ioredis';
import WebSocket from 'ws';
import { silentLogger } from '../lib/log.ts';
import { BotProcess } from '../worker/bot/supervisor.ts';
import { loadConfig } from '../worker/config.ts';
import { RedisPool } from '../worker/pool.ts';
import { DailyBridge } from '../worker/rooms/daily/bridge-process.ts';
import { startWorker } from '../worker/worker.ts';
import { silencePcm, tonePcm } from '../test/fakes/audio.ts';
import { dailyPython } from '../test/fakes/daily-python.ts';
import { startFakeOpenAI } from '../test/fakes/openai-compatible.ts';
import { freePort } from '../test/harness/ports.ts';
import { startRedis } from '../test/harness/redis.ts';
import { baseEnv, call, spawnBody, startFakeBackend, startWorkerProcess, waitIdleSlots, WORKER_TOKEN } from '../test/worker/harness.ts';
import { machineLine, percentile, printTable, ratePerSecond, rssMiB } from './support.ts';

/**
 * The worker's hot paths, each beside a peer run in the same script:
 * 1. spawn latency (POST / to answer) with a warm pool, at rising concurrency, beside a bare
 *    Express route that does the same auth and JSON parse and one Redis GET (the floor);
 * 2. atomic slot claims per second (the Lua script) beside plain LPOPs on the same Redis;
 * 3. memory per idle slot (a prewarmed bot process) beside a bare node process;
 * 4. the pipeline's own latency per turn (speech end to the bot's next audio, provider time
 *    excluded) with model fakes answering at once and after 100 ms.
 */
const fmt = (n: number, d = 1) => n.toFixed(d);

console.log(`${machineLine()} (shared machine: tails move with it)`);
const redisServer = await startRedis();
const redis = new Redis(redisServer.url);
const backend = await startFakeBackend();

// ---- 1. spawn latency --------------------------------------------------------------------------
const port = await freePort();
const prefix = `bench-${Date.now()}`;
const env = { WORKER_TOKEN, REDIS_URL: redisServer.url, BACKEND_URL: backend.url, OPENAI_API_KEY: 'sk-bench', ROOM_PROVIDER: 'local', WARM_POOL_SIZE: '0', PORT: String(port), METRICS_PORT: '0', REDIS_KEY_PREFIX: prefix, POD_NAME: 'bench-pod', HOST: '127.0.0.1' };
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
    await pool.registerIdle(ghost, { slotId: id, roomName: `rm_${id.replace('/', '_')}`, roomUrl: `ws://127.0.0.1:${port}/rooms/rm_${slotSeq}`, roomExp: Math.floor(Date.now() / 1000) + 86_400 }, true);
  }
};

const peer = express();
peer.post('/', (req, res, next) => (req.headers.authorization === `Bearer ${WORKER_TOKEN}` ? next() : res.status(401).end()), express.json(), async (req, res) => {
  await redis.get(`${prefix}:peer:${String((req.body as { sessionId?: string }).sessionId)}`);
  res.json({ room_url: 'ws://x', token: 't' });
});
const peerServer = peer.listen(0, '127.0.0.1');
await new Promise((r) => peerServer.once('listening', r));
const peerUrl = `http://127.0.0.1:${(peerServer.address() as AddressInfo).port}`;

const post = async (url: string): Promise<[number, number]> => {
  const t0 = performance.now();
  const res = await call(`${url}/`, { method: 'POST', headers: { authorization: `Bearer ${WORKER_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(spawnBody()) });
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
  spawnRows.push([concurrency, ours.length, fmt(percentile(ours, 50), 2), fmt(percentile(ours, 99), 2), fmt(percentile(theirs, 50), 2), fmt(percentile(theirs, 99), 2)]);
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
    pool.claim({ sessionId: `inv_claim${i}`, interviewId: 'dpl_b', spawnJson: '{}', nowSeconds: Math.floor(Date.now() / 1000), recordTtlSeconds: 600, minRoomSeconds: 60, traceId: '', spanId: '' }),
  );
const lpopRate = async (): Promise<number> => {
  const key = `${prefix}:peer:list`;
  for (let i = 0; i < CLAIMS; i += 1000) await redis.rpush(key, ...Array.from({ length: 1000 }, (_, j) => `s${i + j}`));
  return ratePerSecond(CLAIMS, 32, () => redis.lpop(key));
};
const claims = await claimRate();
const lpops = await lpopRate();
console.log('\n2. claims per second against Redis (32 in flight)');
printTable(['operation', 'per second'], [['claim script (atomic, idempotent)', Math.round(claims)], ['peer: plain LPOP', Math.round(lpops)]]);

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
printTable(['process', 'RSS'], [['prewarmed bot (avg of 3)', fmt(botRss.reduce((a, b) => a + b, 0) / botRss.length)], ['+ its Daily bridge (ROOM_PROVIDER=daily)', fmt(rssMiB(dailyBridge.pid!))], ['peer: bare node', fmt(rssMiB(bare.pid!))], ['peer: node + tsx loader', fmt(rssMiB(bareTsx.pid!))]]);
bare.kill();
bareTsx.kill();
dailyBridge.kill();
await Promise.all(bots.map((b) => b.stop()));

// ---- 4. pipeline latency per turn --------------------------------------------------------------
const metric = (text: string, kind: 'sum' | 'count', provider: string, op: string) =>
  Number(new RegExp(`worker_provider_latency_seconds_${kind}\\{provider="${provider}",operation="${op}"\\} ([\\d.e+-]+)`).exec(text)?.[1] ?? 0);
async function turnLatency(providerLatencyMs: number): Promise<{ turn: number; provider: number; added: number; turns: number }> {
  const openai = await startFakeOpenAI({ voice: 'tone', latencyMs: { chat: providerLatencyMs, stt: providerLatencyMs, tts: providerLatencyMs } });
  const w = await startWorkerProcess(baseEnv({ redisUrl: redisServer.url, backendUrl: backend.url, llmUrl: openai.url, REDIS_KEY_PREFIX: `bench-pipe-${providerLatencyMs}`, WARM_POOL_SIZE: '1', VAD_SILENCE_MS: '300' }));
  await w.waitReady();
  await waitIdleSlots(w, 1);
  const before = await w.metrics();
  const body = spawnBody({}, 8);
  const res = await w.spawnSession(body);
  const ws = new WebSocket(`${String(res.body.room_url)}?token=${encodeURIComponent(String(res.body.token))}`);
  const latencies: number[] = [];
  let sentAt: number | null = null;
  await new Promise<void>((resolve, reject) => {
    ws.on('error', reject);
    ws.on('close', () => resolve());
    ws.on('message', (data, binary) => {
      if (binary) {
        if (sentAt !== null) latencies.push(performance.now() - sentAt);
        sentAt = null;
        return;
      }
      const msg = JSON.parse(data.toString()) as { type: string; state?: string };
      if (msg.type === 'state' && msg.state === 'listening') {
        const pcm = Buffer.concat([tonePcm(400, 16_000), silencePcm(400, 16_000)]);
        for (let i = 0; i < pcm.length; i += 640) ws.send(pcm.subarray(i, i + 640));
        sentAt = performance.now();
      }
    });
  });
  const after = await w.metrics();
  const delta = (kind: 'sum' | 'count', provider: string, op: string) => metric(after, kind, provider, op) - metric(before, kind, provider, op);
  // A turn is stt + llm (follow-up decision) + the first byte of the next utterance's tts. The
  // greeting and the first question are spoken before any turn: their tts time is taken out.
  const turns = latencies.length;
  const ttsAvg = delta('sum', 'tts', 'first_byte') / delta('count', 'tts', 'first_byte');
  const extraTts = delta('count', 'tts', 'first_byte') - turns;
  const providerSeconds = delta('sum', 'stt', 'transcribe') + delta('sum', 'llm', 'follow_up') + delta('sum', 'tts', 'first_byte') - extraTts * ttsAvg;
  const turnAvg = latencies.reduce((x, y) => x + y, 0) / turns;
  const providerPerTurn = (providerSeconds * 1000) / turns;
  await w.stop();
  await openai.close();
  return { turn: turnAvg, provider: providerPerTurn, added: turnAvg - providerPerTurn, turns };
}
const fast = await turnLatency(0);
const slow = await turnLatency(100);
console.log('\n4. pipeline latency per turn: respondent speech end -> first byte of the bot\'s next audio (ms)');
printTable(['model fakes', 'turns', 'turn avg', 'provider time', 'pipeline added'], [
  ['answer at once', fast.turns, fmt(fast.turn), fmt(fast.provider), fmt(fast.added)],
  ['answer after 100 ms', slow.turns, fmt(slow.turn), fmt(slow.provider), fmt(slow.added)],
]);

await pool.close();
redis.disconnect();
await backend.close();
await redisServer.stop();
process.exit(0);
