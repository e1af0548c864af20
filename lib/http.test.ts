import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../test/fakes/openai-compatible.ts';
import { freePort, waitFor } from '../test/harness/ports.ts';
import { baseEnv, startFakeBackend, startWorkerProcess, WORKER_TOKEN, type FakeBackend, type WorkerProcess } from '../test/worker/harness.ts';

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
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(port), API_STUB_DB: join(mkdtempSync(join(tmpdir(), 'edge-')), 'db.sqlite'), LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  apiStub.stdout!.on('data', (c: Buffer) => (apiStubOutput += c.toString()));
  apiStub.stderr!.on('data', (c: Buffer) => (apiStubOutput += c.toString()));
  worker = await startWorkerProcess(baseEnv({ redisUrl: inject('redisUrl'), backendUrl: backend.url, llmUrl: openai.url, REDIS_KEY_PREFIX: `edge-${Date.now()}`, WARM_POOL_SIZE: '0' }));
  await waitFor(async () => (await fetch(`${apiStubUrl}/readyz`)).ok, { timeoutMs: 30_000, what: `the api-stub (output: ${apiStubOutput.slice(-500)})` });
  await worker.waitReady();
});

afterAll(async () => {
  apiStub?.kill('SIGKILL');
  await worker?.stop();
  await Promise.all([openai?.close(), backend?.close()]);
});

/** Writes raw bytes and parses the one HTTP answer that comes back. */
function raw(port: number, request: string): Promise<{ status: number; contentType: string; body: unknown }> {
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
    socket.end(request);
  });
}

const servers = () => [
  { name: 'api-stub', port: Number(new URL(apiStubUrl).port) },
  { name: 'worker', port: worker.port },
];

describe('shared HTTP edge', () => {
  it('answers a body that is not what its Content-Encoding says with 400 invalid_request, on both servers', async () => {
    for (const encoding of ['gzip', 'deflate', 'br']) {
      const stub = await fetch(`${apiStubUrl}/api/v2/sdk/sessions`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': encoding }, body: '{"publishableKey":"pk_test_x"}' });
      expect(stub.status, encoding).toBe(400);
      expect(await stub.json()).toMatchObject({ error: 'invalid_request', message: expect.stringContaining('Content-Encoding') });
      const res = await fetch(`${worker.url}/`, { method: 'POST', headers: { authorization: `Bearer ${WORKER_TOKEN}`, 'content-type': 'application/json', 'content-encoding': encoding }, body: '{"sessionId":"inv_x"}' });
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
      expect(answer.body, name).toEqual({ error: 'invalid_request', message: 'The request headers are too large.' });
    }
  });
});
