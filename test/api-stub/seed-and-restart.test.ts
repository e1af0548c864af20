import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitFor } from '../harness/ports.ts';
import { openDatabase, readMigrations } from '../../api-stub/db/database.ts';
import { applySeed, loadSeedFile, parseSeed, SeedError } from '../../api-stub/seed.ts';
import { listWebhookEndpoints } from '../../api-stub/store/webhook-endpoints.ts';
import { getDeployment } from '../../api-stub/store/deployments.ts';
import { post, get } from './harness.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const TSX = join(ROOT, 'node_modules/.bin/tsx');

interface Proc {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function startMain(env: Record<string, string>): Proc {
  const child = spawn(TSX, ['api-stub/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

describe('the api-stub process: seed file, persistence across restarts, SIGTERM', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'api-stub-main-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('starts from examples/seed.json, keeps sessions across a restart, and exits 0 on SIGTERM', async () => {
    const port = await freePort();
    const env = {
      PORT: String(port),
      API_STUB_DB: join(dir, 'main.sqlite'),
      API_STUB_SEED: join(ROOT, 'examples/seed.json'),
      API_STUB_MODE: 'development',
    };
    const seed = JSON.parse(readFileSync(join(ROOT, 'examples/seed.json'), 'utf8'));
    const ws = seed.workspaces[0];
    const base = `http://127.0.0.1:${port}/api/v2/sdk/sessions`;

    let proc = startMain(env);
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok, { timeoutMs: 20_000, what: 'api-stub readiness' });
    const created = await post(base, { publishableKey: ws.keys.publishable[0], interviewId: ws.deployments[0].id, metadata: { order: 1 } });
    expect(created.status).toBe(201);
    expect(created.body.sessionUrl).toMatch(
      new RegExp(`^http://127\\.0\\.0\\.1:${port}/s/${created.body.sessionId}\\?from=sdk#k=[A-Za-z0-9_-]{43}$`),
    );
    proc.child.kill('SIGTERM');
    expect(await proc.exited).toBe(0);
    expect(proc.output()).toContain('"msg":"stopped"');

    // Second start: the same seed is upserted again (no duplicates), and the session is still there.
    proc = startMain(env);
    try {
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok, {
        timeoutMs: 20_000,
        what: 'api-stub readiness after restart',
      });
      const got = await get(`${base}/${created.body.sessionId}`, { Authorization: `Bearer ${ws.keys.secret[0]}` });
      expect(got.status).toBe(200);
      expect(got.body.status).toBe('SENT');
      expect(got.body.metadata).toEqual({ order: 1 });
    } finally {
      proc.child.kill('SIGTERM');
      expect(await proc.exited).toBe(0);
    }
    const db = openDatabase(env.API_STUB_DB);
    expect(Number(db.prepare('SELECT COUNT(*) AS n FROM workspaces').get()!.n)).toBe(1);
    expect(Number(db.prepare('SELECT COUNT(*) AS n FROM webhook_endpoints').get()!.n)).toBe(1);
    db.close();
  }, 60_000);

  it('refuses to start on a bad seed file, naming the field, and on a bad variable, naming it', async () => {
    const bad = join(dir, 'bad-seed.json');
    writeFileSync(bad, JSON.stringify({ workspaces: [{ id: 'ws_x', name: 'X', keys: { publishable: ['pk_nope'] } }] }));
    const proc = startMain({
      PORT: String(await freePort()),
      API_STUB_DB: join(dir, 'bad.sqlite'),
      API_STUB_SEED: bad,
      API_STUB_MODE: 'development',
    });
    expect(await proc.exited).toBe(1);
    expect(proc.output()).toContain('workspaces.0.keys.publishable.0');
    const badPort = startMain({ PORT: 'eighty', API_STUB_DB: join(dir, 'bad2.sqlite') });
    expect(await badPort.exited).toBe(1);
    expect(badPort.output()).toContain('PORT: expected an integer');
  }, 60_000);
});

describe('seed loading (in process)', () => {
  it('upserts: a second apply with changed values updates in place and duplicates nothing', () => {
    const db = openDatabase(':memory:');
    const seed = loadSeedFile(join(ROOT, 'examples/seed.json'));
    applySeed(db, seed, 1000);
    applySeed(db, seed, 2000);
    const changed = structuredClone(seed);
    changed.workspaces[0]!.deployments[0]!.status = 'PAUSED';
    changed.workspaces[0]!.webhookEndpoints[0]!.secrets = ['whsec_rotated000000', 'whsec_demo0000000000000000'];
    applySeed(db, changed, 3000);
    expect(getDeployment(db, 'dpl_onboarding')!.status).toBe('PAUSED');
    const endpoints = listWebhookEndpoints(db, 'ws_demo');
    expect(endpoints).toHaveLength(1);
    expect(endpoints[0]!.secrets).toEqual(['whsec_rotated000000', 'whsec_demo0000000000000000']);
    expect(Number(db.prepare('SELECT COUNT(*) AS n FROM api_keys').get()!.n)).toBe(2);
    // Keys are stored hashed, never in clear.
    const dump = JSON.stringify(db.prepare('SELECT * FROM api_keys').all());
    expect(dump).not.toContain('sk_test_demo0000000000000000');
    db.close();
  });

  it('reports selfHost settings back when no handler stores them, and calls the handler when given', () => {
    const db = openDatabase(':memory:');
    const seed = parseSeed({
      workspaces: [
        {
          id: 'ws_sh',
          name: 'SH',
          keys: {},
          selfHost: { pipelineEndpoint: 'https://voice.example.com/', pipelineToken: 'tok_0123456789abcdef' },
        },
      ],
    });
    expect(applySeed(db, seed, 1).selfHostSkipped).toEqual(['ws_sh']);
    const seen: unknown[] = [];
    const summary = applySeed(db, seed, 2, { applySelfHost: (_db, id, settings) => seen.push([id, settings]) });
    expect(summary.selfHostApplied).toBe(1);
    expect(seen).toEqual([['ws_sh', { pipelineEndpoint: 'https://voice.example.com/', pipelineToken: 'tok_0123456789abcdef' }]]);
    db.close();
  });

  it('rejects bad seeds with every bad path named, and changes nothing', () => {
    const cases: Array<[unknown, string]> = [
      [{}, 'workspaces'],
      [{ workspaces: [{ id: 'nope', name: 'x', keys: {} }] }, 'workspaces.0.id'],
      [{ workspaces: [{ id: 'ws_a', name: 'x', keys: { secret: ['pk_test_abcdefgh1'] } }] }, 'workspaces.0.keys.secret.0'],
      [
        { workspaces: [{ id: 'ws_a', name: 'x', keys: {}, deployments: [{ id: 'dpl_a', status: 'LIVE', interview: {} }] }] },
        'workspaces.0.deployments.0.status',
      ],
      [
        {
          workspaces: [
            { id: 'ws_a', name: 'x', keys: {}, deployments: [{ id: 'dpl_a', status: 'ACTIVE', expiresAt: '2030-01-01', interview: {} }] },
          ],
        },
        'workspaces.0.deployments.0.expiresAt',
      ],
      [
        { workspaces: [{ id: 'ws_a', name: 'x', keys: {}, webhookEndpoints: [{ url: 'http://x.test/h', secrets: ['nope'] }] }] },
        'workspaces.0.webhookEndpoints.0.secrets.0',
      ],
      [
        { workspaces: [{ id: 'ws_a', name: 'x', keys: {}, selfHost: { pipelineEndpoint: 'http://insecure.test/' } }] },
        'workspaces.0.selfHost.pipelineEndpoint',
      ],
    ];
    for (const [input, path] of cases) {
      expect(() => parseSeed(input)).toThrow(SeedError);
      expect(() => parseSeed(input)).toThrow(path);
    }
  });

  it('records each migration once in schema_migrations, in file order', () => {
    const dir = mkdtempSync(join(tmpdir(), 'api-stub-mig-'));
    try {
      const path = join(dir, 'm.sqlite');
      openDatabase(path).close();
      const db = openDatabase(path);
      const rows = db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all();
      expect(rows.map((r) => r.name)).toEqual(readMigrations().map((m) => m.name));
      expect(rows[0]!.name).toBe('001_initial.sql');
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
