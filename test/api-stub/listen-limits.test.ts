import { spawn, type ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, waitFor } from '../harness/ports.ts';

/**
 * Issue 41: the api-stub took sockets until its file descriptors were gone, and ran on Node's
 * default timeouts (an unfinished request was not answered within 75 s). The real entry point
 * (api-stub/main.ts) with HTTP_MAX_CONNECTIONS and HTTP_HEADERS_TIMEOUT_SECONDS small.
 */
const TSX = join(process.cwd(), 'node_modules', '.bin', 'tsx');
const running: ChildProcess[] = [];
const sockets: Socket[] = [];

async function startMain(env: Record<string, string>): Promise<{ url: string; port: number; output: () => string }> {
  const port = await freePort();
  let output = '';
  const child = spawn(TSX, ['api-stub/main.ts'], {
    env: {
      ...process.env,
      LOG_LEVEL: 'info',
      API_STUB_MODE: 'development',
      PIPELINE_KEK: '',
      API_STUB_DB: ':memory:',
      ...env,
      PORT: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.push(child);
  child.stdout!.on('data', (c: Buffer) => void (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => void (output += c.toString()));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(async () => (await fetch(`${url}/healthz`).catch(() => null))?.ok === true, {
    timeoutMs: 20_000,
    intervalMs: 100,
    what: `the api-stub to listen (output: ${output.slice(-500)})`,
  });
  return { url, port, output: () => output };
}

afterAll(() => {
  for (const socket of sockets) socket.destroy();
  for (const child of running) if (child.exitCode === null) child.kill('SIGKILL');
});

/** A TCP connection that has sent `sent` (maybe nothing); it reads, so a close reaches it. */
function openSocket(port: number, sent = ''): Promise<{ socket: Socket; received: () => string; closed: () => boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    sockets.push(socket);
    let received = '';
    let isClosed = false;
    socket.on('error', () => undefined);
    socket.on('data', (d: Buffer) => void (received += d.toString()));
    socket.on('close', () => void (isClosed = true));
    const handle = { socket, received: () => received, closed: () => isClosed };
    socket.once('connect', () => {
      if (sent) socket.write(sent);
      resolve(handle);
    });
    socket.once('close', () => resolve(handle));
  });
}

describe('the api-stub port under idle and unfinished connections', () => {
  it('answers an unfinished request head 408 in the JSON error shape, within the headers timeout, and closes it', async () => {
    const stub = await startMain({ HTTP_HEADERS_TIMEOUT_SECONDS: '1' });
    const slow = await openSocket(stub.port, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    // Node's defaults: 60 s for the head, checked every 30 s.
    await waitFor(() => slow.closed(), { timeoutMs: 15_000, what: 'the unfinished request to be answered and closed' });
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408 /);
    const body = JSON.parse(slow.received().split('\r\n\r\n')[1]!) as unknown;
    expect(body).toEqual({ error: 'request_timeout', message: expect.any(String) });
  }, 60_000);

  it('holds at most HTTP_MAX_CONNECTIONS idle sockets, evicting them for real requests', async () => {
    const cap = 20;
    const stub = await startMain({ HTTP_MAX_CONNECTIONS: String(cap), HTTP_HEADERS_TIMEOUT_SECONDS: '120' });
    const idle = await Promise.all(Array.from({ length: 60 }, () => openSocket(stub.port)));
    await waitFor(() => idle.filter((s) => !s.closed()).length <= cap, {
      timeoutMs: 10_000,
      what: `at most ${cap} idle sockets to stay open`,
    });
    // A request still gets in: it closes the oldest idle socket.
    for (let i = 0; i < 5; i++) expect((await fetch(`${stub.url}/healthz`)).status).toBe(200);
    expect(stub.output()).toContain('the api-stub port is at its connection cap (HTTP_MAX_CONNECTIONS)');
  }, 60_000);
});
