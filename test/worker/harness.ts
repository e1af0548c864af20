import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort, waitFor } from '../harness/ports.ts';

/**
 * Test helpers for the worker: a real worker process (`tsx worker/main.ts`), and a real HTTP
 * receiver standing in for the backend's outcome endpoint.
 */
const ROOT = resolve(import.meta.dirname, '../..');

export const WORKER_TOKEN = 'test-worker-token-0123456789abcdef';

export interface WorkerProcess {
  url: string;
  port: number;
  /** The management port's base URL (METRICS_PORT): /metrics, /healthz, /readyz. */
  metricsUrl: string;
  proc: ChildProcess;
  logs: string[];
  /** PIDs of this worker's bot processes. */
  botPids(): number[];
  spawnSession(
    body: unknown,
    token?: string,
  ): Promise<{ status: number; body: Record<string, unknown>; headers: Record<string, string | string[] | undefined> }>;
  metrics(): Promise<string>;
  /** GET /healthz: the status, or 0 when the worker does not answer at all. */
  healthz(): Promise<number>;
  ready(): Promise<boolean>;
  waitReady(timeoutMs?: number): Promise<void>;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

export interface WorkerEnv {
  redisUrl: string;
  backendUrl: string;
  llmUrl: string;
  [key: string]: string | undefined;
}

export function baseEnv(e: WorkerEnv): NodeJS.ProcessEnv {
  const { redisUrl, backendUrl, llmUrl, ...rest } = e;
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    WORKER_TOKEN,
    REDIS_URL: redisUrl,
    BACKEND_URL: backendUrl,
    ROOM_PROVIDER: 'local',
    OPENAI_API_KEY: 'sk-test-fake-key-000000',
    LLM_BASE_URL: llmUrl,
    STT_BASE_URL: llmUrl,
    TTS_BASE_URL: llmUrl,
    WARM_POOL_SIZE: '1',
    HEARTBEAT_INTERVAL_MS: '300',
    IDLE_TIMEOUT_SECONDS: '5',
    JOIN_TIMEOUT_SECONDS: '10',
    VAD_SILENCE_MS: '300',
    PROVIDER_TIMEOUT_MS: '3000',
    REPORT_ATTEMPTS: '3',
    DRAIN_GRACE_SECONDS: '10',
    TRANSCRIPT_STORE: `file://${mkdtempSync(join(tmpdir(), 'transcripts-'))}`,
    LOG_LEVEL: 'warn',
    ...rest,
  };
}

export interface HttpAnswer {
  status: number;
  text: string;
  headers: Record<string, string | string[] | undefined>;
}

/** A plain HTTP(S) call that can trust a test CA (fetch reads NODE_EXTRA_CA_CERTS only at start-up). */
export function call(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; ca?: Buffer; timeoutMs?: number } = {},
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const request = url.startsWith('https:') ? httpsRequest : httpRequest;
    // A connection of its own per call (agent: false): Node's global agent keeps idle sockets until a
    // second before the server's keep-alive timeout (5 s here), and a call that reuses one the server
    // is closing fails at once. Suspected, not proven, in a /healthz read as 0 under stress-ng: on a
    // quiet machine 21 reuses at 4.9-5.1 s all succeeded.
    const req = request(
      url,
      { method: init.method ?? 'GET', headers: init.headers, ca: init.ca, timeout: init.timeoutMs ?? 10_000, agent: false },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, headers: res.headers }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`request to ${url} timed out`)));
    req.on('error', reject);
    req.end(init.body);
  });
}

// Worker processes run in their own process groups (so that stop() takes their bots too); make
// sure none outlives this test process, even when a test times out before its own clean-up.
const started = new Set<number>();
process.once('exit', () => {
  for (const pid of started) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

export async function startWorkerProcess(env: NodeJS.ProcessEnv, options: { tls?: boolean; caFile?: string } = {}): Promise<WorkerProcess> {
  const port = Number(env.PORT ?? (await freePort()));
  const metricsPort = Number(env.METRICS_PORT ?? (await freePort()));
  const metricsUrl = `http://127.0.0.1:${metricsPort}`;
  const scheme = options.tls ? 'https' : 'http';
  const url = `${scheme}://127.0.0.1:${port}`;
  // One node process with the tsx loader (as `npm run worker` ends up running), in its own process
  // group so that stop() takes its bot processes down with it, as a pod's end would.
  const proc = spawn(process.execPath, ['--import', 'tsx', 'worker/main.ts'], {
    cwd: ROOT,
    env: { ...env, PORT: String(port), METRICS_PORT: String(metricsPort), POD_NAME: env.POD_NAME ?? `pod-${port}` },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  started.add(proc.pid!);
  proc.once('exit', () => started.delete(proc.pid!));
  const logs: string[] = [];
  proc.stdout!.on('data', (d: Buffer) => logs.push(d.toString()));
  proc.stderr!.on('data', (d: Buffer) => logs.push(d.toString()));
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  const ca = options.caFile ? readFileSync(options.caFile) : undefined;
  const request = (path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) =>
    call(`${url}${path}`, { ...init, ca });
  const manage = (path: string) => call(`${metricsUrl}${path}`);
  const worker: WorkerProcess = {
    url,
    port,
    metricsUrl,
    proc,
    logs,
    exited,
    botPids() {
      try {
        // Only the bots: the tsx loader may have an esbuild child of its own.
        return execFileSync('pgrep', ['-P', String(proc.pid), '-f', 'worker/bot/process.ts'], { encoding: 'utf8' })
          .trim()
          .split('\n')
          .filter(Boolean)
          .map(Number);
      } catch {
        return [];
      }
    },
    async spawnSession(body, token = WORKER_TOKEN) {
      const res = await request('/', {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      return { status: res.status, body: JSON.parse(res.text) as Record<string, unknown>, headers: res.headers };
    },
    async metrics() {
      return (await manage('/metrics')).text;
    },
    async healthz() {
      try {
        return (await manage('/healthz')).status;
      } catch {
        return 0;
      }
    },
    async ready() {
      try {
        return (await manage('/readyz')).status === 200;
      } catch {
        return false;
      }
    },
    // Wide: readiness is not what these tests measure, and a worker's start (tsx, the turn models,
    // its warm bots) has taken over 30 s on a machine loaded on both cores (docs/testing.md).
    async waitReady(timeoutMs = 120_000) {
      try {
        await waitFor(() => worker.ready(), { timeoutMs, what: `worker on ${url} to be ready` });
      } catch (err) {
        // Its output when the wait gave up, not when it began.
        throw new Error(`${(err as Error).message} (its output: ${logs.join('').slice(-2000) || 'none'})`, { cause: err });
      }
    },
    async stop() {
      try {
        process.kill(-proc.pid!, 'SIGKILL'); // the whole group: the worker and its bots
      } catch {
        // already gone
      }
      if (proc.exitCode === null && proc.signalCode === null) await exited;
    },
  };
  return worker;
}

/** Idle slots of a worker, read from its own metrics. */
export async function idleSlots(worker: WorkerProcess): Promise<number> {
  const m = /^worker_idle_slots (\d+)/m.exec(await worker.metrics());
  return m ? Number(m[1]) : 0;
}

/** Waits until the worker has `count` warm slots in the pool. */
/** Wide by default for the same reason as `waitReady`: warm bots load their models at start. */
export async function waitIdleSlots(worker: WorkerProcess, count: number, timeoutMs = 60_000): Promise<void> {
  try {
    await waitFor(async () => (await idleSlots(worker)) === count, { timeoutMs, what: `${count} idle slots on ${worker.url}` });
  } catch (err) {
    throw new Error(`${(err as Error).message} (its output: ${worker.logs.join('').slice(-1500) || 'none'})`, { cause: err });
  }
}

export interface Report {
  sessionId: string;
  authorization: string | undefined;
  body: { status: string; response?: { transcriptKey: string; summary: string }; reason?: string; message?: string };
}

export interface FakeBackend {
  url: string;
  reports: Report[];
  /** Answer this status to the next `count` reports (to exercise retries). */
  failNext(status: number, count?: number): void;
  /** From now on, accept this session's report only with `Bearer <token>` (401 otherwise), like the service (C1). */
  requireToken(sessionId: string, token: string): void;
  /** Stops listening (connections are refused), as a backend that is down. */
  pause(): Promise<void>;
  /** Listens again on the same port. */
  resume(): Promise<void>;
  waitForReport(sessionId: string, timeoutMs: number): Promise<Report>;
  close(): Promise<void>;
}

export async function startFakeBackend(): Promise<FakeBackend> {
  const reports: Report[] = [];
  let failures: number[] = [];
  const tokens = new Map<string, string>();
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const match = /^\/api\/v2\/worker\/sessions\/([^/]+)\/outcome$/.exec(req.url ?? '');
      if (req.method !== 'POST' || !match) {
        res.writeHead(404, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ error: 'not_found', message: 'no route' }));
      }
      const required = tokens.get(decodeURIComponent(match[1]!));
      if (required !== undefined && req.headers.authorization !== `Bearer ${required}`) {
        res.writeHead(401, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ error: 'invalid_token', message: "not this session's report token" }));
      }
      const status = failures.shift();
      if (status) {
        res.writeHead(status, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ error: 'internal_error', message: 'injected' }));
      }
      reports.push({
        sessionId: decodeURIComponent(match[1]!),
        authorization: req.headers.authorization,
        body: JSON.parse(raw) as Report['body'],
      });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ sessionId: match[1], status: 'COMPLETED' }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    reports,
    failNext: (status, count = 1) => void (failures = [...failures, ...Array<number>(count).fill(status)]),
    requireToken: (sessionId, token) => void tokens.set(sessionId, token),
    async pause() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
    async resume() {
      await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
    },
    async waitForReport(sessionId, timeoutMs) {
      await waitFor(() => reports.some((r) => r.sessionId === sessionId), { timeoutMs, what: `the outcome report of ${sessionId}` });
      return reports.find((r) => r.sessionId === sessionId)!;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

let counter = 0;
/** A spawn body with a unique session id. */
export function spawnBody(overrides: Record<string, unknown> = {}, questions = 1): Record<string, unknown> {
  counter++;
  return {
    sessionId: `inv_test${Date.now().toString(36)}${counter}${Math.random().toString(36).slice(2, 8)}`,
    interviewId: 'dpl_test1',
    metadata: { plan: 'test' },
    interview: {
      title: 'Test interview',
      language: 'en',
      intro: 'Hi.',
      questions: Array.from({ length: questions }, (_, i) => ({ id: `q${i + 1}`, text: `Question ${i + 1}?`, maxFollowUps: 1 })),
      closing: 'Thanks, bye.',
    },
    ...overrides,
  };
}
