import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { connect as tlsConnect } from 'node:tls';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createCertificateAuthority } from '../test/harness/pki.ts';
import { waitFor } from '../test/harness/ports.ts';
import { ConfigError } from './env.ts';
import { installClientErrorHandler } from './http.ts';
import { capConnections, readListenLimits, serverTimeoutOptions, type ListenLimits } from './listen-limits.ts';
import { createLogger } from './log.ts';

const quiet = createLogger({ name: 'test', level: 'error' });
const servers: Server[] = [];
const sockets: Socket[] = [];

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise((r) => {
          s.close(r);
          s.closeAllConnections();
        }),
    ),
  );
});

describe('readListenLimits', () => {
  it('reads <prefix>_MAX_CONNECTIONS, _HEADERS_TIMEOUT_SECONDS, _KEEPALIVE_TIMEOUT_SECONDS over documented defaults', () => {
    const defaults = { maxConnections: 1000, headersTimeoutSeconds: 10, keepAliveTimeoutSeconds: 65 };
    expect(readListenLimits({}, 'HTTP', defaults)).toEqual({
      maxConnections: 1000,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 40_000,
      keepAliveTimeoutMs: 65_000,
    });
    expect(
      readListenLimits(
        { HTTP_MAX_CONNECTIONS: '50', HTTP_HEADERS_TIMEOUT_SECONDS: '2', HTTP_KEEPALIVE_TIMEOUT_SECONDS: '7' },
        'HTTP',
        defaults,
      ),
    ).toEqual({ maxConnections: 50, headersTimeoutMs: 2000, requestTimeoutMs: 32_000, keepAliveTimeoutMs: 7000 });
    expect(readListenLimits({}, 'X', { ...defaults, requestTimeoutSeconds: 15 }).requestTimeoutMs).toBe(15_000);
  });

  it('names the variable of a bad value', () => {
    const defaults = { maxConnections: 1000, headersTimeoutSeconds: 10, keepAliveTimeoutSeconds: 65 };
    for (const [name, value] of [
      ['HTTP_MAX_CONNECTIONS', '5'],
      ['HTTP_MAX_CONNECTIONS', 'lots'],
      ['HTTP_HEADERS_TIMEOUT_SECONDS', '0'],
      ['HTTP_KEEPALIVE_TIMEOUT_SECONDS', '1.5'],
    ] as const) {
      let error: unknown;
      try {
        readListenLimits({ [name]: value }, 'HTTP', defaults);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).variable).toBe(name);
    }
  });
});

const LIMITS: ListenLimits = { maxConnections: 10, headersTimeoutMs: 60_000, requestTimeoutMs: 60_000, keepAliveTimeoutMs: 60_000 };

/** An HTTP server with the cap; `/slow` answers only when released; upgrades are accepted and kept. */
async function cappedServer(): Promise<{ port: number; release: () => void; connections: () => Promise<number> }> {
  const pending: Array<() => void> = [];
  const server = createServer(serverTimeoutOptions(LIMITS), (req, res) => {
    if (req.url === '/slow') pending.push(() => res.end('late'));
    else res.end('ok');
  });
  server.on('upgrade', (_req, socket: Socket) => {
    socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n');
    socket.on('end', () => socket.destroy()); // as a WebSocket library does when its peer leaves
  });
  capConnections(server, LIMITS, { log: quiet, portName: 'the test port', variable: 'TEST_MAX_CONNECTIONS', upgrades: true });
  installClientErrorHandler(server);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const connections = () => new Promise<number>((resolve, reject) => server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
  return { port: (server.address() as AddressInfo).port, release: () => pending.splice(0).forEach((f) => f()), connections };
}

/** A connection that sends `sent` once open and records what comes back and whether it closed. */
function open(
  port: number,
  sent = '',
  options: { allowHalfOpen?: boolean } = {},
): Promise<{ received: () => string; closed: () => boolean }> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: options.allowHalfOpen ?? false });
    sockets.push(socket);
    let received = '';
    let isClosed = false;
    socket.on('error', () => undefined);
    socket.on('data', (d: Buffer) => void (received += d.toString()));
    socket.on('close', () => void (isClosed = true));
    const handle = { received: () => received, closed: () => isClosed };
    socket.once('connect', () => {
      if (sent) socket.write(sent);
      resolve(handle);
    });
    socket.once('close', () => resolve(handle));
  });
}

type Handle = Awaited<ReturnType<typeof open>>;
const openCount = (handles: Array<{ closed: () => boolean }>) => handles.filter((h) => !h.closed()).length;

describe('capConnections', () => {
  it('closes the oldest silent connection for a newcomer, so a request always gets in', async () => {
    const { port } = await cappedServer();
    const silent: Handle[] = [];
    for (let i = 0; i < 25; i++) silent.push(await open(port));
    await waitFor(() => openCount(silent) <= LIMITS.maxConnections, { timeoutMs: 5000, what: 'the cap to hold' });
    // The survivors are the newest: eviction goes oldest first.
    await waitFor(() => silent.slice(-LIMITS.maxConnections).every((h) => !h.closed()) && silent.slice(0, 15).every((h) => h.closed()), {
      timeoutMs: 5000,
      what: 'the oldest to go',
    });
    const request = await open(port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await waitFor(() => request.received().endsWith('ok'), { timeoutMs: 5000, what: 'the request to be answered' });
  });

  it('never evicts a connection with a request in flight or a WebSocket: a newcomer is refused instead', async () => {
    const { port, release } = await cappedServer();
    const busy: Handle[] = [];
    for (let i = 0; i < 5; i++) busy.push(await open(port, 'GET /slow HTTP/1.1\r\nHost: x\r\n\r\n'));
    for (let i = 0; i < 5; i++) busy.push(await open(port, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n'));
    await waitFor(() => busy.slice(5).every((h) => h.received().includes('101')), { timeoutMs: 5000, what: 'the upgrades' });
    const extra = await open(port);
    await waitFor(() => extra.closed(), { timeoutMs: 5000, what: 'the newcomer to be refused' });
    expect(openCount(busy)).toBe(10);
    // Once the slow requests are answered, their connections are idle and can make room.
    release();
    await waitFor(() => busy.slice(0, 5).every((h) => h.received().endsWith('late')), { timeoutMs: 5000, what: 'the slow answers' });
    const request = await open(port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await waitFor(() => request.received().endsWith('ok'), { timeoutMs: 5000, what: 'a request past the idle keep-alive ones' });
    expect(busy.slice(5).every((h) => !h.closed())).toBe(true);
  });

  it('destroys a connection that an error answer ended, though the peer never closes its side', async () => {
    const { port, connections } = await cappedServer();
    // Half-open peers: they take the answer's end but never end their own side.
    const ended: Handle[] = [];
    // A request Node's parser refuses is answered 400 and ended by the server's clientError handler (a 408 is too).
    for (let i = 0; i < 10; i++) ended.push(await open(port, 'NOT HTTP AT ALL\r\n\r\n', { allowHalfOpen: true }));
    await waitFor(() => ended.every((h) => h.received().includes('invalid_request')), { timeoutMs: 5000, what: 'the 400 answers' });
    expect(ended.some((h) => h.closed())).toBe(false);
    await waitFor(async () => (await connections()) === 0, { timeoutMs: 10_000, what: 'the server to let go of the ended connections' });
  });

  it('over TLS, knows a request in flight by its TLS socket: silent newcomers evict each other, not it', async () => {
    const ca = createCertificateAuthority();
    const cert = ca.issueServer('capped', ['127.0.0.1']);
    const pending: Array<() => void> = [];
    const server = createHttpsServer(
      { cert: cert.certPem, key: cert.keyPem, ...serverTimeoutOptions(LIMITS) },
      (_req, res) => void pending.push(() => res.end('late')),
    );
    capConnections(server, LIMITS, { log: quiet, portName: 'the test port', variable: 'TEST_MAX_CONNECTIONS' });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const inFlight = await Promise.all(
      Array.from(
        { length: 5 },
        () =>
          new Promise<{ received: () => string }>((resolve) => {
            const socket = tlsConnect({ port, host: '127.0.0.1', ca: ca.certPem }, () =>
              socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n'),
            );
            sockets.push(socket);
            let received = '';
            socket.on('error', () => undefined);
            socket.on('data', (d: Buffer) => void (received += d.toString()));
            resolve({ received: () => received });
          }),
      ),
    );
    await waitFor(() => pending.length === 5, { timeoutMs: 5000, what: 'the five requests to arrive' });
    const silent: Handle[] = [];
    for (let i = 0; i < 20; i++) silent.push(await open(port));
    await waitFor(() => openCount(silent) <= LIMITS.maxConnections - 5, { timeoutMs: 5000, what: 'the silent ones to evict each other' });
    pending.splice(0).forEach((f) => f());
    await waitFor(() => inFlight.every((c) => c.received().endsWith('late')), {
      timeoutMs: 5000,
      what: 'the requests in flight to be answered',
    });
  });
});
