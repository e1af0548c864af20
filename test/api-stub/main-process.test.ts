import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { constructEvent } from '../../sdk/server/webhooks.ts';
import { startHostedPipeline } from '../fakes/hosted-pipeline.ts';
import type { SpawnServer } from '../fakes/spawn-server.ts';
import { createCertificateAuthority, type CertificateAuthority } from '../harness/pki.ts';
import { freePort, waitFor } from '../harness/ports.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../harness/webhook-receiver.ts';
import { A, call, HOSTED_KEY, reportTokenOf, routingSeed, WHSEC, WORKER_TOKEN } from './routing-harness.ts';

/** The real entry point (api-stub/main.ts) as a child process: startup checks and a restart with webhooks pending. */
const TSX = join(process.cwd(), 'node_modules', '.bin', 'tsx');

interface Proc {
  child: ChildProcess;
  output: () => string;
  url: string;
  exited: Promise<number | null>;
}

async function startMain(env: Record<string, string>, port: number): Promise<Proc> {
  let output = '';
  const child = spawn(TSX, ['api-stub/main.ts'], {
    env: { ...process.env, LOG_LEVEL: 'info', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (c: Buffer) => {
    output += c.toString();
  });
  child.stderr!.on('data', (c: Buffer) => {
    output += c.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, url: `http://127.0.0.1:${port}`, exited };
}

async function ready(proc: Proc): Promise<void> {
  await waitFor(async () => (await fetch(`${proc.url}/readyz`)).ok, {
    timeoutMs: 20_000,
    intervalMs: 100,
    what: `the api-stub to be ready (output: ${proc.output().slice(-500)})`,
  });
}

let ca: CertificateAuthority;
let hosted: SpawnServer;
let dir: string;
const running: Proc[] = [];

beforeAll(async () => {
  ca = createCertificateAuthority();
  hosted = await startHostedPipeline({ key: HOSTED_KEY, tls: ca.issueServer('hosted') });
  dir = mkdtempSync(join(tmpdir(), 'voice-main-'));
});
afterAll(async () => {
  for (const p of running) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  await hosted?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('api-stub main process', () => {
  it('refuses to start when the seed holds a self-host token but PIPELINE_KEK is missing, without printing the token', async () => {
    const seedFile = join(dir, 'selfhost-seed.json');
    writeFileSync(
      seedFile,
      JSON.stringify(
        routingSeed('http://127.0.0.1:9/hook', { pipelineEndpoint: 'https://worker.example.com/', pipelineToken: WORKER_TOKEN }),
      ),
    );
    // Development mode, so that the self-host check (not the production one) is what refuses.
    const proc = await startMain(
      { API_STUB_MODE: 'development', API_STUB_DB: join(dir, 'refuse.sqlite'), API_STUB_SEED: seedFile },
      await freePort(),
    );
    running.push(proc);
    expect(await proc.exited).toBe(1);
    expect(proc.output()).toMatch(/PIPELINE_KEK: not set, but the seed gives workspace .* a self-host token/);
    expect(proc.output()).not.toContain(WORKER_TOKEN);
  });

  it('refuses to start in production mode (the default) without PIPELINE_KEK, before the seed stores any secret in clear', async () => {
    const seedFile = join(dir, 'plain-seed.json');
    writeFileSync(seedFile, JSON.stringify(routingSeed('http://127.0.0.1:9/hook')));
    const dbPath = join(dir, 'production.sqlite');
    const proc = await startMain({ API_STUB_DB: dbPath, API_STUB_SEED: seedFile, PIPELINE_KEK: '' }, await freePort());
    running.push(proc);
    expect(await proc.exited).toBe(1);
    expect(proc.output()).toMatch(/^api-stub: failed to start: PIPELINE_KEK: not set; in production .* API_STUB_MODE=development/m);
    // Nothing was written: no database file, so no webhook secret in clear.
    expect(existsSync(dbPath)).toBe(false);
    expect(proc.output()).not.toContain(WHSEC);
  });

  it('starts without a key in development mode, saying loudly that secrets are stored in clear', async () => {
    const seedFile = join(dir, 'dev-seed.json');
    writeFileSync(seedFile, JSON.stringify(routingSeed('http://127.0.0.1:9/hook')));
    const proc = await startMain(
      { API_STUB_MODE: 'development', API_STUB_DB: join(dir, 'dev.sqlite'), API_STUB_SEED: seedFile, PIPELINE_KEK: '' },
      await freePort(),
    );
    running.push(proc);
    await ready(proc);
    expect(proc.output()).toMatch(/"level":"warn".*DEVELOPMENT MODE.*IN CLEAR/);
    proc.child.kill('SIGTERM');
    expect(await proc.exited).toBe(0);
  });

  it('after a restart, sends the webhooks that were pending, each once', async () => {
    const receiverPort = await freePort();
    const receiverUrl = `http://127.0.0.1:${receiverPort}/webhooks`;
    const seed = routingSeed(receiverUrl) as { workspaces: Array<{ webhookEndpoints: Array<Record<string, unknown>> }> };
    seed.workspaces[0]!.webhookEndpoints[0]!.retries = true;
    const seedFile = join(dir, 'seed.json');
    writeFileSync(seedFile, JSON.stringify(seed));
    const env = {
      API_STUB_DB: join(dir, 'restart.sqlite'),
      API_STUB_SEED: seedFile,
      PIPELINE_KEK: randomBytes(32).toString('base64'),
      HOSTED_PIPELINE_URL: hosted.url,
      HOSTED_PIPELINE_KEY: HOSTED_KEY,
      EGRESS_ALLOW_HOSTS: '127.0.0.1',
      PIPELINE_EXTRA_CA_FILE: ca.certFile,
      WEBHOOK_RETRY_SCHEDULE: '1500ms,1500ms,1500ms',
    };
    const port = await freePort();
    const first = await startMain(env, port);
    running.push(first);
    await ready(first);

    // Two sessions reach an outcome while the receiver is down: first attempts are refused, retries pending.
    const ids: string[] = [];
    for (const status of ['completed', 'failed']) {
      const created = await call('POST', `${first.url}/api/v2/sdk/sessions`, {
        publishableKey: A.pk,
        interviewId: A.dpl,
        metadata: { status },
      });
      const id = created.body.sessionId as string;
      expect(
        (await call('POST', `${first.url}/api/v2/sdk/connect`, { publishableKey: A.pk, interviewId: A.dpl, sessionId: id })).status,
      ).toBe(200);
      const body =
        status === 'completed' ? { status, response: { transcriptKey: 's3://t/1', summary: 'ok' } } : { status, reason: 'pipeline_crash' };
      expect(
        (
          await call('POST', `${first.url}/api/v2/worker/sessions/${id}/outcome`, body, {
            authorization: `Bearer ${reportTokenOf([hosted], id)}`,
          })
        ).status,
      ).toBe(200);
      ids.push(id);
    }
    const log = async (url: string) =>
      (await call('GET', `${url}/api/v2/workspace/webhook-deliveries`, undefined, { authorization: `Bearer ${A.sk}` })).body.data as Array<{
        eventId: string;
        attempt: number;
        outcome: string;
        error: string | null;
      }>;
    // Rows are written when an attempt starts (in_flight) and settled after: wait for two settled ones.
    await waitFor(async () => (await log(first.url)).filter((d) => d.outcome !== 'in_flight').length >= 2, {
      timeoutMs: 5_000,
      what: 'two refused first attempts',
    });
    expect((await log(first.url)).every((d) => d.outcome === 'retry_scheduled' && /^refused/.test(d.error ?? ''))).toBe(true);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);

    const receiver: WebhookReceiver = await startWebhookReceiver({ port: receiverPort });
    try {
      const second = await startMain(env, port);
      running.push(second);
      await ready(second);
      await receiver.waitForCount(2, 10_000);
      await waitFor(async () => (await log(second.url)).filter((d) => d.outcome === 'delivered').length === 2, {
        timeoutMs: 5_000,
        what: 'two delivered attempts',
      });
      const events = receiver.received.map((r) => constructEvent(r.rawBody, String(r.headers['service-signature']), WHSEC));
      expect(events.map((e) => e.type).sort()).toEqual(['interview.completed', 'interview.failed']);
      expect(new Set(events.map((e) => (e.data as { sessionId: string }).sessionId))).toEqual(new Set(ids));
      // Nothing left to send: the receiver got each event exactly once.
      expect(receiver.received).toHaveLength(2);
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
      expect(first.output() + second.output()).not.toContain(HOSTED_KEY);
    } finally {
      await receiver.close();
    }
  }, 60_000);
});
