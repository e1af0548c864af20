import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-compatible.ts';
import { waitFor } from '../harness/ports.ts';
import {
  baseEnv,
  spawnBody,
  startFakeBackend,
  startWorkerProcess,
  waitIdleSlots,
  type FakeBackend,
  type WorkerProcess,
} from './harness.ts';

/**
 * Issue 41: idle sockets kept real requests out of the worker's ports. On the management port, 64
 * sockets that never read (its cap) kept /healthz failing for over 60 s; on the public port, with
 * 1,100 idle sockets (over PUBLIC_MAX_CONNECTIONS) 5 of 15 spawns were reset. Now a connection that
 * arrives at the cap closes the oldest one that has sent no request (lib/listen-limits.ts). Here,
 * cheaply: a public cap of 40 under 60 idle sockets and 20 more before each spawn, and 100 sockets
 * that never read on the management port. The headers timeout is long, so only eviction can help.
 */
const PUBLIC_CAP = 40;

let openai: FakeOpenAI;
let backend: FakeBackend;
let worker: WorkerProcess;
const flood: Socket[] = [];

beforeAll(async () => {
  [openai, backend] = await Promise.all([startFakeOpenAI({ voice: 'tone' }), startFakeBackend()]);
  worker = await startWorkerProcess(
    baseEnv({
      redisUrl: inject('redisUrl'),
      backendUrl: backend.url,
      llmUrl: openai.url,
      REDIS_KEY_PREFIX: `eviction-${Date.now()}`,
      WARM_POOL_SIZE: '2',
      JOIN_TIMEOUT_SECONDS: '60',
      PUBLIC_MAX_CONNECTIONS: String(PUBLIC_CAP),
      PUBLIC_HEADERS_TIMEOUT_SECONDS: '120',
    }),
  );
  await worker.waitReady();
  await waitIdleSlots(worker, 2);
});

afterAll(async () => {
  for (const socket of flood) socket.destroy();
  if (process.env.DEBUG_WORKER) console.log(worker?.logs.join('').slice(-4000));
  await worker?.stop();
  await Promise.all([openai?.close(), backend?.close()]);
});

/** A TCP connection that sends nothing; `reads: false` never reads either. Resolves once open (or refused). */
function idleConnection(port: number, reads: boolean): Promise<{ socket: Socket; closed: () => boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let isClosed = false;
    socket.on('error', () => undefined);
    if (reads) socket.resume();
    else socket.pause();
    socket.on('close', () => void (isClosed = true));
    socket.once('connect', () => resolve({ socket, closed: () => isClosed }));
    socket.once('close', () => resolve({ socket, closed: () => true }));
  });
}

async function openIdle(port: number, count: number, reads: boolean) {
  const opened = await Promise.all(Array.from({ length: count }, () => idleConnection(port, reads)));
  flood.push(...opened.map((o) => o.socket));
  return opened;
}

describe("idle sockets at a port's cap", () => {
  it('never keep /healthz out of the management port, even when they never read', async () => {
    await openIdle(Number(new URL(worker.metricsUrl).port), 100, false);
    // Today's cap is 64: the probe's connection evicts one of them.
    await waitFor(async () => (await worker.healthz()) === 200, {
      timeoutMs: 15_000,
      what: '/healthz to answer 200 past 100 silent sockets',
    });
    for (let i = 0; i < 5; i++) expect(await worker.healthz()).toBe(200);
  }, 60_000);

  it('never reset a spawn on the public port: idle ones are closed to make room', async () => {
    const opened = await openIdle(worker.port, 60, true);
    for (let i = 0; i < 2; i++) {
      opened.push(...(await openIdle(worker.port, 20, true)));
      const spawned = await worker.spawnSession(spawnBody());
      expect(spawned.status).toBe(200);
    }
    // The cap held all along: of the 100 idle sockets, at most the cap are still open.
    await waitFor(() => opened.filter((o) => !o.closed()).length <= PUBLIC_CAP, {
      timeoutMs: 5000,
      what: `at most ${PUBLIC_CAP} idle sockets to stay open`,
    });
    expect(worker.logs.join('')).toContain('the public port is at its connection cap');
  }, 60_000);
});
