import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../api-stub/app.ts';
import { loadConfig, type ApiStubConfig } from '../../api-stub/config.ts';
import { openDatabase, type Database } from '../../api-stub/db/database.ts';
import { applySeed, parseSeed } from '../../api-stub/seed.ts';
import type { AppDeps } from '../../api-stub/deps.ts';
import { silentLogger } from '../../lib/log.ts';

/**
 * A real api-stub on 127.0.0.1, port 0, over a temp SQLite file, for integration tests.
 * `restart()` closes the server and the database and opens both again on the same file.
 */
export interface TestClock {
  now: number;
  (): number;
}

export function testClock(start = Date.parse('2026-11-23T10:00:00Z')): TestClock {
  const clock = (() => clock.now) as TestClock;
  clock.now = start;
  return clock;
}

export interface RunningApiStub {
  url: string;
  db: Database;
  config: Readonly<ApiStubConfig>;
  clock: TestClock;
  dbPath: string;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export interface StartOptions {
  env?: Record<string, string>;
  seed?: unknown;
  clock?: TestClock;
  /** Extra deps (other parts' fields of AppDeps). */
  deps?: Partial<AppDeps>;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
}

export async function startApiStub(options: StartOptions = {}): Promise<RunningApiStub> {
  const dir = mkdtempSync(join(tmpdir(), 'api-stub-test-'));
  const dbPath = join(dir, 'api-stub.sqlite');
  const config = loadConfig({ PORT: '0', API_STUB_DB: dbPath, ...options.env });
  const clock = options.clock ?? testClock();
  let db = openDatabase(dbPath);
  if (options.seed !== undefined) applySeed(db, parseSeed(options.seed), clock());
  let server = createServer(createApp(config, { db, clock, log: silentLogger, ...options.deps }));
  const stub: RunningApiStub = {
    url: await listen(server),
    db,
    config,
    clock,
    dbPath,
    async restart() {
      await close(server);
      db.close();
      db = openDatabase(dbPath);
      stub.db = db;
      server = createServer(createApp(config, { db, clock, log: silentLogger, ...options.deps }));
      stub.url = await listen(server);
    },
    async stop() {
      await close(server);
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return stub;
}

/** The keys and ids of `testSeed()`. */
export const K = {
  pk: 'pk_test_alpha000000000000',
  pkLive: 'pk_live_alpha000000000000',
  sk: 'sk_test_alpha000000000000',
  otherPk: 'pk_test_beta0000000000000',
  otherSk: 'sk_test_beta0000000000000',
  active: 'dpl_active',
  draft: 'dpl_draft',
  paused: 'dpl_paused',
  expired: 'dpl_expired',
  soon: 'dpl_soon',
  otherActive: 'dpl_beta_active',
} as const;

const interview = {
  title: 'Test interview',
  language: 'en',
  intro: 'Hello.',
  questions: [{ id: 'q1', text: 'How are you?', maxFollowUps: 0 }],
  closing: 'Bye.',
};

/** Two workspaces: alpha with one deployment per status, beta for cross-workspace checks. */
export function testSeed(): unknown {
  return {
    workspaces: [
      {
        id: 'ws_alpha',
        name: 'Alpha',
        keys: { publishable: [K.pk, K.pkLive], secret: [K.sk] },
        deployments: [
          { id: K.active, status: 'ACTIVE', expiresAt: null, interview },
          { id: K.draft, status: 'DRAFT', expiresAt: null, interview },
          { id: K.paused, status: 'PAUSED', expiresAt: null, interview },
          { id: K.expired, status: 'ACTIVE', expiresAt: '2020-01-01T00:00:00Z', interview },
          { id: K.soon, status: 'ACTIVE', expiresAt: '2026-11-23T12:00:00Z', interview },
        ],
        webhookEndpoints: [{ url: 'http://127.0.0.1:9/hook', secrets: ['whsec_alpha0000000000'] }],
      },
      {
        id: 'ws_beta',
        name: 'Beta',
        keys: { publishable: [K.otherPk], secret: [K.otherSk] },
        deployments: [{ id: K.otherActive, status: 'ACTIVE', expiresAt: null, interview }],
      },
    ],
  };
}

// Test responses are read field by field; a loose type keeps the assertions short.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Json; headers: Headers }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

export async function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: Json; headers: Headers }> {
  const res = await fetch(url, { headers });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}
