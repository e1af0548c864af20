import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startApiStub, testSeed, K, type RunningApiStub } from './harness.ts';
import { freePort } from '../harness/ports.ts';
import {
  ServiceClient,
  ServiceError,
  AuthenticationError,
  ConflictError,
  ConnectionError,
  GoneError,
  InternalServerError,
  InvalidRequestError,
  NotFoundError,
  PermissionError,
  RateLimitError,
} from '../../sdk/server/index.ts';

/**
 * The server SDK against a real api-stub over HTTP. A small front proxy misbehaves on purpose
 * (500 after the api-stub already created the session, a reset connection, a 429) to prove that
 * retries are bounded and never create a second session.
 */
type Behaviour = 'forward' | 'forward-then-500' | 'forward-then-reset' | 'reset' | '429' | '500';

interface FlakyProxy {
  url: string;
  script: Behaviour[];
  seen: Array<{ method: string; idempotencyKey: string | undefined }>;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

async function startFlakyProxy(target: () => string): Promise<FlakyProxy> {
  const proxy: FlakyProxy = { url: '', script: [], seen: [], close: async () => undefined };
  const forward = (req: IncomingMessage, body: Buffer): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> =>
    new Promise((resolve, reject) => {
      const upstream = new URL(req.url!, target());
      const headers = { ...req.headers, host: upstream.host };
      const out = httpRequest(upstream, { method: req.method, headers }, async (res) => {
        const data = await readBody(res);
        resolve({ status: res.statusCode!, headers: res.headers as Record<string, string>, body: data });
      });
      out.on('error', reject);
      out.end(body);
    });
  const server: Server = createServer(async (req, res) => {
    const body = await readBody(req);
    proxy.seen.push({ method: req.method!, idempotencyKey: req.headers['idempotency-key'] as string | undefined });
    const behaviour = proxy.script.shift() ?? 'forward';
    if (behaviour === 'reset') return req.socket.destroy();
    if (behaviour === '429') {
      res.writeHead(429, { 'Content-Type': 'application/json', 'Retry-After': '2' });
      return res.end(JSON.stringify({ error: 'rate_limit_exceeded', message: 'slow down' }));
    }
    if (behaviour === '500') {
      res.writeHead(500, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify({ error: 'internal_error', message: 'boom' }));
    }
    const answer = await forward(req, body);
    if (behaviour === 'forward-then-reset') return req.socket.destroy();
    if (behaviour === 'forward-then-500') {
      res.writeHead(500, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify({ error: 'internal_error', message: 'lost the answer' }));
    }
    res.writeHead(answer.status, {
      'Content-Type': answer.headers['content-type'] ?? 'application/json',
      ...(answer.headers['retry-after'] ? { 'Retry-After': answer.headers['retry-after'] } : {}),
    });
    res.end(answer.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  };
  return proxy;
}

describe('server SDK over real HTTP', () => {
  let stub: RunningApiStub;
  let proxy: FlakyProxy;
  const sleeps: number[] = [];
  const noSleep = async (ms: number) => {
    sleeps.push(ms);
  };
  const sessionCount = () => Number(stub.db.prepare('SELECT COUNT(*) AS n FROM sessions').get()!.n);

  beforeAll(async () => {
    stub = await startApiStub({ seed: testSeed() });
    proxy = await startFlakyProxy(() => stub.url);
  });
  afterAll(async () => {
    await proxy.close();
    await stub.stop();
  });

  const direct = () => new ServiceClient({ baseUrl: stub.url, secretKey: K.sk, publishableKey: K.pk, sleep: noSleep });
  const viaProxy = (maxRetries = 2) =>
    new ServiceClient({ baseUrl: proxy.url, secretKey: K.sk, publishableKey: K.pk, sleep: noSleep, maxRetries });

  it('creates and retrieves a session', async () => {
    const client = direct();
    const created = await client.sessions.create({ interviewId: K.active, metadata: { userId: 'u-1' } });
    expect(created.sessionId).toMatch(/^inv_/);
    const session = await client.sessions.retrieve(created.sessionId);
    expect(session).toMatchObject({
      id: created.sessionId,
      interviewId: K.active,
      status: 'SENT',
      metadata: { userId: 'u-1' },
      url: created.sessionUrl,
      clickedAt: null,
      completedAt: null,
      response: null,
    });
  });

  it('retries a create whose answer was lost (500 after creation, then a reset) and still makes exactly one session', async () => {
    const before = sessionCount();
    sleeps.length = 0;
    proxy.seen.length = 0;
    proxy.script = ['forward-then-500', 'forward-then-reset', 'forward'];
    const created = await viaProxy().sessions.create({ interviewId: K.active, metadata: { attempt: 'lossy' } });
    expect(sessionCount()).toBe(before + 1);
    expect(proxy.seen).toHaveLength(3);
    const keys = new Set(proxy.seen.map((s) => s.idempotencyKey));
    expect(keys.size).toBe(1);
    expect([...keys][0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(sleeps).toHaveLength(2);
    const session = await direct().sessions.retrieve(created.sessionId);
    expect(session.metadata).toEqual({ attempt: 'lossy' });
  });

  it('honours Retry-After on 429', async () => {
    sleeps.length = 0;
    proxy.script = ['429', 'forward'];
    await viaProxy().sessions.create({ interviewId: K.active });
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeGreaterThanOrEqual(2000);
  });

  it('bounds retries: gives up with the last error after maxRetries', async () => {
    proxy.seen.length = 0;
    proxy.script = ['500', '500', '500', '500'];
    const err = await viaProxy(2)
      .sessions.retrieve('inv_whatever')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InternalServerError);
    expect(proxy.seen).toHaveLength(3);
    proxy.script = [];
  });

  it('does not retry a client error', async () => {
    proxy.seen.length = 0;
    const err = await viaProxy()
      .sessions.create({ interviewId: K.draft })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConflictError);
    expect(proxy.seen).toHaveLength(1);
  });

  it('maps every error of the API to a ServiceError with status, code and message', async () => {
    const client = direct();
    const expectError = async (p: Promise<unknown>, Type: typeof ServiceError, status: number, code: string) => {
      const err = await p.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(Type);
      expect(err).toMatchObject({ status, code });
      expect((err as Error).message.length).toBeGreaterThan(5);
      expect((err as ServiceError).requestId).toMatch(/^req_/);
    };
    await expectError(
      client.sessions.create({ interviewId: K.active, metadata: [1] as unknown as Record<string, unknown> }),
      InvalidRequestError,
      400,
      'invalid_request',
    );
    await expectError(
      client.sessions.create({ interviewId: K.active, publishableKey: 'pk_test_unknown000000' }),
      AuthenticationError,
      401,
      'invalid_key',
    );
    await expectError(client.sessions.create({ interviewId: K.otherActive }), PermissionError, 403, 'cross_workspace');
    await expectError(client.sessions.create({ interviewId: 'dpl_missing' }), NotFoundError, 404, 'interview_not_found');
    await expectError(client.sessions.create({ interviewId: K.paused }), ConflictError, 409, 'interview_not_active');
    await expectError(client.sessions.create({ interviewId: K.expired }), GoneError, 410, 'interview_expired');
    await expectError(client.sessions.retrieve('inv_missing'), NotFoundError, 404, 'session_not_found');
    const { sessionId } = await client.sessions.create({ interviewId: K.active });
    const other = new ServiceClient({ baseUrl: stub.url, secretKey: K.otherSk });
    await expectError(other.sessions.retrieve(sessionId), PermissionError, 403, 'cross_workspace');
    const wrongKind = new ServiceClient({ baseUrl: stub.url, secretKey: 'sk_test_unknown00000000' });
    await expectError(wrongKind.sessions.retrieve(sessionId), AuthenticationError, 401, 'invalid_key');
  });

  it('maps 429 rate_limit_exceeded to RateLimitError with retryAfterSeconds when it will not wait', async () => {
    const capped = await startApiStub({ seed: testSeed(), env: { RATE_CAP_HOURLY: '1' } });
    try {
      const client = new ServiceClient({ baseUrl: capped.url, publishableKey: K.pk, maxRetries: 0 });
      await client.sessions.create({ interviewId: K.active });
      const err = await client.sessions.create({ interviewId: K.active }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RateLimitError);
      expect(err).toMatchObject({ status: 429, code: 'rate_limit_exceeded' });
      expect((err as RateLimitError).retryAfterSeconds).toBeGreaterThan(0);
    } finally {
      await capped.stop();
    }
  });

  it('reports a refused connection as ConnectionError (status 0) after its retries', async () => {
    const port = await freePort();
    sleeps.length = 0;
    const client = new ServiceClient({ baseUrl: `http://127.0.0.1:${port}`, secretKey: K.sk, sleep: noSleep, maxRetries: 1 });
    const err = await client.sessions.retrieve('inv_x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err).toMatchObject({ status: 0, code: 'connection_error' });
    expect(sleeps).toHaveLength(1);
  });

  it('times out an attempt that gets no answer, retries it, then reports ConnectionError', async () => {
    let hits = 0;
    const silent = createServer(() => {
      hits++; // never answers
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      const client = new ServiceClient({ baseUrl: url, secretKey: K.sk, timeoutMs: 200, maxRetries: 1, sleep: noSleep });
      const started = Date.now();
      const err = await client.sessions.retrieve('inv_x').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConnectionError);
      expect((err as Error).message).toMatch(/No answer from/);
      expect(hits).toBe(2);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });

  it('checks its arguments before sending anything', async () => {
    const client = direct();
    await expect(client.sessions.create(undefined as never)).rejects.toThrow(/interviewId/);
    await expect(client.sessions.retrieve('')).rejects.toThrow(/sessionId/);
    await expect(new ServiceClient({ baseUrl: stub.url }).sessions.retrieve('inv_x')).rejects.toThrow(/secretKey/);
    await expect(new ServiceClient({ baseUrl: stub.url }).sessions.create({ interviewId: K.active })).rejects.toThrow(/publishableKey/);
  });

  it('validates its options strictly', () => {
    expect(() => new ServiceClient({ baseUrl: stub.url, secretkey: 'sk_x' } as never)).toThrow(
      /Unknown ServiceClient option\(s\): secretkey/,
    );
    expect(() => new ServiceClient({ baseUrl: 'nope' })).toThrow(/baseUrl/);
    expect(() => new ServiceClient({ baseUrl: stub.url, maxRetries: -1 })).toThrow(/maxRetries/);
    expect(() => new ServiceClient({ baseUrl: stub.url, secretKey: 'pk_test_x' })).toThrow(/secretKey/);
  });
});
