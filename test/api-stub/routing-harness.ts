import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../../api-stub/app.ts';
import { loadConfig, type ApiStubConfig } from '../../api-stub/config.ts';
import { loadKeyProvider } from '../../api-stub/crypto/key-provider.ts';
import { openDatabase, type Database } from '../../api-stub/db/database.ts';
import { createRuntime, type Runtime } from '../../api-stub/runtime.ts';
import { applySeed, parseSeed } from '../../api-stub/seed.ts';
import { selfHostSeedHooks } from '../../api-stub/self-host/seed-hook.ts';
import { createLogger } from '../../lib/log.ts';
import { startHostedPipeline } from '../fakes/hosted-pipeline.ts';
import { startSelfHostedWorker } from '../fakes/self-hosted-worker.ts';
import type { SpawnServer } from '../fakes/spawn-server.ts';
import { createCertificateAuthority, type CertificateAuthority } from '../harness/pki.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../harness/webhook-receiver.ts';

/**
 * The whole routing path for tests: a throwaway CA, the hosted-pipeline stand-in and a self-hosted
 * worker stand-in (both HTTPS with certificates from that CA), a webhook receiver, and a real
 * api-stub (app + runtime: outbox dispatcher and sweeper) over a temp SQLite file, its logs collected.
 */
export const HOSTED_KEY = 'hosted-key-9f8e7d6c5b4a39281706';
export const WORKER_TOKEN = 'worker-token-a1b2c3d4e5f60718293a';
export const WHSEC = 'whsec_routingtest000000';
export const A = { ws: 'ws_alpha', pk: 'pk_test_alpha000000000000', sk: 'sk_test_alpha000000000000', dpl: 'dpl_active' } as const;
export const B = { ws: 'ws_beta', pk: 'pk_test_beta0000000000000', sk: 'sk_test_beta0000000000000', dpl: 'dpl_beta_active' } as const;

export interface Clock {
  (): number;
  now: number | null;
}

export interface RoutingStack {
  ca: CertificateAuthority;
  hosted: SpawnServer;
  worker: SpawnServer;
  receiver: WebhookReceiver;
  url: string;
  db: Database;
  dbPath: string;
  config: Readonly<ApiStubConfig>;
  runtime: Runtime;
  /** Returns real time unless `now` is set. */
  clock: Clock;
  logs: string[];
  stop(): Promise<void>;
}

const interview = {
  title: 'Routing test',
  language: 'en',
  intro: 'Hello.',
  questions: [{ id: 'q1', text: 'How are you?', maxFollowUps: 0 }],
  closing: 'Bye.',
};

export function routingSeed(receiverUrl: string, selfHostA: { pipelineEndpoint: string; pipelineToken: string } | null = null): unknown {
  return {
    workspaces: [
      {
        id: A.ws,
        name: 'Alpha',
        keys: { publishable: [A.pk], secret: [A.sk] },
        deployments: [{ id: A.dpl, status: 'ACTIVE', expiresAt: null, interview }],
        webhookEndpoints: [{ url: receiverUrl, secrets: [WHSEC] }],
        selfHost: selfHostA,
      },
      {
        id: B.ws,
        name: 'Beta',
        keys: { publishable: [B.pk], secret: [B.sk] },
        deployments: [{ id: B.dpl, status: 'ACTIVE', expiresAt: null, interview }],
        webhookEndpoints: [{ url: receiverUrl, secrets: [WHSEC] }],
      },
    ],
  };
}

export async function startRoutingStack(
  options: { env?: Record<string, string>; selfHostA?: boolean; kek?: string } = {},
): Promise<RoutingStack> {
  const ca = createCertificateAuthority();
  const hosted = await startHostedPipeline({ key: HOSTED_KEY, tls: ca.issueServer('hosted') });
  const worker = await startSelfHostedWorker({ token: WORKER_TOKEN, tls: ca.issueServer('worker') });
  const receiver = await startWebhookReceiver();
  const dir = mkdtempSync(join(tmpdir(), 'voice-routing-'));
  const dbPath = join(dir, 'api-stub.sqlite');
  const env = {
    PORT: '0',
    API_STUB_DB: dbPath,
    HOSTED_PIPELINE_URL: hosted.url,
    HOSTED_PIPELINE_KEY: HOSTED_KEY,
    EGRESS_ALLOW_HOSTS: '127.0.0.1,localhost',
    PIPELINE_EXTRA_CA_FILE: ca.certFile,
    PIPELINE_KEK: options.kek ?? randomBytes(32).toString('base64'),
    WEBHOOK_POLL_INTERVAL_MS: '25',
    ...options.env,
  };
  const config = loadConfig(env);
  const logs: string[] = [];
  const log = createLogger({ name: 'api-stub', level: 'debug', sink: (line) => logs.push(line) });
  const clock = (() => clock.now ?? Date.now()) as Clock;
  clock.now = null;
  const db = openDatabase(dbPath);
  const keys = loadKeyProvider(env, log);
  const seed = parseSeed(
    routingSeed(receiver.url, options.selfHostA ? { pipelineEndpoint: worker.url, pipelineToken: WORKER_TOKEN } : null),
  );
  applySeed(db, seed, clock(), await selfHostSeedHooks(seed, keys.provider));
  const runtime = createRuntime(config, { db, clock, log, keys: keys.provider });
  const server: Server = createServer(createApp(config, { db, clock, log, routing: runtime.routing }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  runtime.start();
  return {
    ca,
    hosted,
    worker,
    receiver,
    db,
    dbPath,
    config,
    runtime,
    clock,
    logs,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async stop() {
      await runtime.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      db.close();
      await Promise.all([hosted.close(), worker.close(), receiver.close()]);
      rmSync(dir, { recursive: true, force: true });
      rmSync(ca.dir, { recursive: true, force: true });
    },
  };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export async function call(
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Json; headers: Headers; ms: number }> {
  const started = performance.now();
  const res = await fetch(url, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers, ms: performance.now() - started };
}

/** Creates a session through the public API and returns its id. */
export async function newSession(
  stack: RoutingStack,
  who: typeof A | typeof B = A,
  metadata: Record<string, unknown> = { respondent: 'r-1' },
): Promise<string> {
  const res = await call('POST', `${stack.url}/api/v2/sdk/sessions`, { publishableKey: who.pk, interviewId: who.dpl, metadata });
  if (res.status !== 201) throw new Error(`session creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.sessionId as string;
}

export function connect(stack: RoutingStack, sessionId: string, who: typeof A | typeof B = A) {
  return call('POST', `${stack.url}/api/v2/sdk/connect`, { publishableKey: who.pk, interviewId: who.dpl, sessionId, metadata: {} });
}

/** The reportToken of the latest spawn call for `sessionId` at either stand-in (the worker reports with it, C1). */
export function reportTokenOf(servers: readonly SpawnServer[], sessionId: string): string {
  const spawns = servers.flatMap((s) => s.requests).filter((r) => r.body?.sessionId === sessionId);
  const token = spawns.at(-1)?.body?.reportToken;
  if (typeof token !== 'string') throw new Error(`no spawn call with a reportToken was recorded for ${sessionId}`);
  return token;
}
