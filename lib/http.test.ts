import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../test/fakes/openai-compatible.ts';
import { freePort, waitFor } from '../test/harness/ports.ts';
import { installClientErrorHandler } from './http.ts';
import {
  baseEnv,
  spawnBody,
  startFakeBackend,
  startWorkerProcess,
  WORKER_TOKEN,
  type FakeBackend,
  type WorkerProcess,
} from '../test/worker/harness.ts';

/**
 * The shared HTTP edge on both real servers (api-stub/main.ts and worker/main.ts as processes):
 * a body its Content-Encoding does not decode is a 400 in our shape, and the requests Node's own
 * parser refuses (bad request line, oversized headers) are answered in our shape too.
 */
let openai: FakeOpenAI;
let backend: FakeBackend;
let worker: WorkerProcess;
let apiStub: ChildProcess;
let apiStubUrl: string;
let apiStubOutput = '';

beforeAll(async () => {
  [openai, backend] = await Promise.all([startFakeOpenAI({ voice: 'tone' }), startFakeBackend()]);
  const port = await freePort();
  apiStubUrl = `http://127.0.0.1:${port}`;
  apiStub = spawn(process.execPath, ['--import', 'tsx', 'api-stub/main.ts'], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(port),
      API_STUB_DB: join(mkdtempSync(join(tmpdir(), 'edge-')), 'db.sqlite'),
      API_STUB_MODE: 'development',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  apiStub.stdout!.on('data', (c: Buffer) => (apiStubOutput += c.toString()));
  apiStub.stderr!.on('data', (c: Buffer) => (apiStubOutput += c.toString()));
  worker = await startWorkerProcess(
    baseEnv({
      redisUrl: inject('redisUrl'),
      backendUrl: backend.url,
      llmUrl: openai.url,
      REDIS_KEY_PREFIX: `edge-${Date.now()}`,
      WARM_POOL_SIZE: '0',
    }),
  );
  await waitFor(async () => (await fetch(`${apiStubUrl}/readyz`)).ok, {
    timeoutMs: 30_000,
    what: `the api-stub (output: ${apiStubOutput.slice(-500)})`,
  });
  await worker.waitReady();
});

afterAll(async () => {
  apiStub?.kill('SIGKILL');
  await worker?.stop();
  await Promise.all([openai?.close(), backend?.close()]);
});

/** Writes raw bytes and parses the one HTTP answer that comes back (keepOpen: do not end our side). */
function raw(
  port: number,
  request: string,
  options: { keepOpen?: boolean } = {},
): Promise<{ status: number; contentType: string; body: unknown }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.on('data', (d: Buffer) => (answer += d.toString()));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = answer.split('\r\n\r\n', 2);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      const contentType = /content-type: ([^\r\n]+)/i.exec(head)?.[1] ?? '';
      let parsed: unknown = body;
      try {
        parsed = JSON.parse(body);
      } catch {
        // left as text: the assertion below shows it
      }
      resolve({ status, contentType, body: parsed });
    });
    if (options.keepOpen) socket.write(request);
    else socket.end(request);
  });
}

const servers = () => [
  { name: 'api-stub', port: Number(new URL(apiStubUrl).port) },
  { name: 'worker', port: worker.port },
];

describe('shared HTTP edge', () => {
  it('answers a body that is not what its Content-Encoding says with 400 invalid_request, on both servers', async () => {
    for (const encoding of ['gzip', 'deflate', 'br']) {
      const stub = await fetch(`${apiStubUrl}/api/v2/sdk/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': encoding },
        body: '{"publishableKey":"pk_test_x"}',
      });
      expect(stub.status, encoding).toBe(400);
      expect(await stub.json()).toMatchObject({ error: 'invalid_request', message: expect.stringContaining('Content-Encoding') });
      const res = await fetch(`${worker.url}/`, {
        method: 'POST',
        headers: { authorization: `Bearer ${WORKER_TOKEN}`, 'content-type': 'application/json', 'content-encoding': encoding },
        body: '{"sessionId":"inv_x"}',
      });
      expect(res.status, encoding).toBe(400);
      expect(await res.json()).toMatchObject({ error: 'invalid_request', message: expect.stringContaining('Content-Encoding') });
    }
  });

  it("gives Node's own 400 for a bad request line our JSON shape, on both servers", async () => {
    for (const { name, port } of servers()) {
      const answer = await raw(port, 'GET /\x01 nonsense\r\n\r\n');
      expect(answer.status, name).toBe(400);
      expect(answer.contentType, name).toMatch(/^application\/json/);
      expect(answer.body, name).toEqual({ error: 'invalid_request', message: expect.any(String) });
    }
  });

  it("gives Node's own 431 for oversized headers our JSON shape, on both servers", async () => {
    for (const { name, port } of servers()) {
      const answer = await raw(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(40_000)}\r\n\r\n`);
      expect(answer.status, name).toBe(431);
      expect(answer.body, name).toEqual({ error: 'headers_too_large', message: 'The request headers are too large.' });
    }
  });

  it('answers an HTTP/1.1 request without Host with 400 in our JSON shape, on both servers', async () => {
    for (const { name, port } of servers()) {
      const answer = await raw(port, 'GET /healthz HTTP/1.1\r\n\r\n');
      expect(answer.status, name).toBe(400);
      expect(answer.contentType, name).toMatch(/^application\/json/);
      expect(answer.body, name).toEqual({ error: 'invalid_request', message: expect.stringContaining('Host') });
      // With Host the app answers as before (the api-stub's probe, the worker's 404 for an unknown path),
      // and HTTP/1.0 has no Host requirement.
      const withHost = (await raw(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).status;
      expect(withHost, name).toBe(name === 'api-stub' ? 200 : 404);
      expect((await raw(port, 'GET /healthz HTTP/1.0\r\n\r\n')).status, name).toBe(withHost);
    }
  });

  it('answers a body not sent as application/json with 415 unsupported_media_type, on both servers', async () => {
    const targets: Array<{ name: string; url: string; headers: Record<string, string> }> = [
      { name: 'api-stub', url: `${apiStubUrl}/api/v2/sdk/sessions`, headers: {} },
      { name: 'worker', url: `${worker.url}/`, headers: { authorization: `Bearer ${WORKER_TOKEN}` } },
    ];
    for (const { name, url, headers } of targets) {
      const res = await fetch(url, { method: 'POST', headers: { ...headers, 'content-type': 'text/plain' }, body: '{}' });
      expect(res.status, name).toBe(415);
      expect(await res.json()).toEqual({ error: 'unsupported_media_type', message: expect.stringContaining('application/json') });
    }
  });

  it('refuses numbers JavaScript cannot carry and metadata 5,000 deep at the worker with 400, not a 503 outage', async () => {
    const spawn = (metadata: string) =>
      fetch(`${worker.url}/`, {
        method: 'POST',
        headers: { authorization: `Bearer ${WORKER_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(spawnBody()).replace('"metadata":{"plan":"test"}', `"metadata":${metadata}`),
      });
    const big = await spawn('{"n":18446744073709551617}');
    expect(big.status).toBe(400);
    expect(await big.json()).toEqual({
      error: 'invalid_request',
      message: expect.stringMatching(/^metadata\.n: the number 18446744073709551617/),
    });
    const deep = await spawn(`{"m":${'['.repeat(5000)}${']'.repeat(5000)}}`);
    expect(deep.status).toBe(400);
    expect(await deep.json()).toEqual({
      error: 'invalid_request',
      message: expect.stringMatching(/^metadata: nested more than 32 levels deep/),
    });
  });
});

describe('timeouts of the shared edge', () => {
  it('answers a request that does not arrive in time with 408 request_timeout, not invalid_request', async () => {
    const server = createServer({ requestTimeout: 300, headersTimeout: 300, connectionsCheckingInterval: 50 }, (_req, res) =>
      res.end('app'),
    );
    installClientErrorHandler(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      // Headers begun and never finished.
      const answer = await raw((server.address() as AddressInfo).port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n', { keepOpen: true });
      expect(answer.status).toBe(408);
      expect(answer.body).toEqual({ error: 'request_timeout', message: 'The request was not received in time.' });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
