import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-compatible.ts';
import { createCertificateAuthority } from '../harness/pki.ts';
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
import { runRespondent } from './respondent.ts';

/**
 * Issue 19, connection exhaustion: about 20,000 idle TCP connections to the public port took the
 * worker to its file-descriptor limit and its management /healthz failed for the whole hold. The
 * public port now has a cap (PUBLIC_MAX_CONNECTIONS) and closes connections that send no request
 * (PUBLIC_HEADERS_TIMEOUT_SECONDS). Here, cheaply: a cap of 50, 200 idle connections. The
 * management port answers throughout, the idle ones are gone within the timeout, a spawn works
 * after, and a live interview's room WebSockets (on the same public port) are never cut.
 */
const CAP = 50;
const FLOOD = 200;
const HEADERS_TIMEOUT_S = 2;

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
      REDIS_KEY_PREFIX: `connlimits-${Date.now()}`,
      WARM_POOL_SIZE: '2',
      IDLE_TIMEOUT_SECONDS: '60',
      JOIN_TIMEOUT_SECONDS: '60',
      PUBLIC_MAX_CONNECTIONS: String(CAP),
      PUBLIC_HEADERS_TIMEOUT_SECONDS: String(HEADERS_TIMEOUT_S),
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

/**
 * A TCP connection that says nothing; resolves once it is open, with a flag for when it closes.
 * It reads what it is sent (the 408), so that the server's close reaches it as its own 'close'.
 */
function idleConnection(port: number): Promise<{ socket: Socket; closed: () => boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let isClosed = false;
    socket.on('error', () => undefined);
    socket.resume();
    socket.on('close', () => void (isClosed = true));
    socket.once('connect', () => resolve({ socket, closed: () => isClosed }));
    socket.once('close', () => resolve({ socket, closed: () => true }));
  });
}

describe('the public port under a flood of idle connections', () => {
  it('caps them, times them out, keeps the management port and live rooms answering', async () => {
    // A live interview first: its respondent stays silent through the flood and the timeout.
    const live = await worker.spawnSession(spawnBody({}, 1));
    expect(live.status).toBe(200);
    let listening = false;
    const respondent = runRespondent(String(live.body.room_url), String(live.body.token), {
      onListening: (turn) => (turn === 1 ? ((listening = true), 'silent') : 'answer'),
    });
    await waitFor(() => listening, { timeoutMs: 15_000, what: 'the bot to ask its first question' });

    const opened = await Promise.all(Array.from({ length: FLOOD }, () => idleConnection(worker.port)));
    flood.push(...opened.map((o) => o.socket));
    // Past the cap, connections are closed as they arrive (the room's two sockets count too).
    await waitFor(() => opened.filter((o) => !o.closed()).length <= CAP, {
      timeoutMs: 5000,
      what: `at most ${CAP} idle connections to stay open`,
    });
    expect(await worker.healthz()).toBe(200);
    expect(await worker.ready()).toBe(true);

    // The ones let in are closed for sending nothing, within the timeout (plus a wide margin).
    const t0 = Date.now();
    while (opened.some((o) => !o.closed())) {
      expect(await worker.healthz(), 'the management port answers throughout').toBe(200);
      expect(Date.now() - t0, `${opened.filter((o) => !o.closed()).length} idle connections still open`).toBeLessThan(
        HEADERS_TIMEOUT_S * 1000 + 10_000,
      );
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(Date.now() - t0).toBeGreaterThan(0);

    // The room outlived the timeout: it is a WebSocket past its request. The respondent answers now and the interview completes.
    expect(respondent.socket.readyState).toBe(respondent.socket.OPEN);
    respondent.say('yes, I liked it');
    const done = await respondent.done;
    expect(done.ended).toBe('completed');
    expect(done.closeCode).toBe(1000);

    // And the port takes work again.
    await waitIdleSlots(worker, 2, 15_000);
    const next = await worker.spawnSession(spawnBody());
    expect(next.status).toBe(200);
    expect(worker.logs.join('')).toContain('the public port is at its connection cap');
  }, 90_000);

  it('over TLS, closes a connection that never starts its handshake within the same timeout', async () => {
    const ca = createCertificateAuthority();
    const cert = ca.issueServer('worker', ['127.0.0.1']);
    const tls = await startWorkerProcess(
      baseEnv({
        redisUrl: inject('redisUrl'),
        backendUrl: backend.url,
        llmUrl: openai.url,
        REDIS_KEY_PREFIX: `connlimits-tls-${Date.now()}`,
        WARM_POOL_SIZE: '0',
        TLS_CERT_FILE: cert.certFile,
        TLS_KEY_FILE: cert.keyFile,
        PUBLIC_HEADERS_TIMEOUT_SECONDS: '1',
      }),
      { tls: true, caFile: ca.certFile },
    );
    try {
      await tls.waitReady();
      const silent = await idleConnection(tls.port);
      flood.push(silent.socket);
      // Node's own default would hold it for 120 s.
      await waitFor(() => silent.closed(), { timeoutMs: 15_000, what: 'the silent TLS connection to be closed' });
      expect(await tls.healthz()).toBe(200);
    } finally {
      await tls.stop();
    }
  }, 180_000);
});
