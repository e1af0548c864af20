import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../api-stub/db/database.ts';
import { INTERRUPTED_ERROR } from '../../api-stub/webhooks/delivery-log.ts';
import { startHostedPipeline } from '../fakes/hosted-pipeline.ts';
import type { SpawnServer } from '../fakes/spawn-server.ts';
import { createCertificateAuthority, type CertificateAuthority } from '../harness/pki.ts';
import { freePort, waitFor } from '../harness/ports.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../harness/webhook-receiver.ts';
import { A, call, HOSTED_KEY, reportTokenOf, routingSeed } from './routing-harness.ts';

/**
 * An attempt in flight when the api-stub is killed (issue 19): delivered again later (at least once,
 * as documented) and no longer missing from webhook_deliveries. The real entry point as a process,
 * a receiver that never answers, SIGKILL while the attempt waits.
 */
let ca: CertificateAuthority;
let hosted: SpawnServer;
let receiver: WebhookReceiver;
let dir: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  ca = createCertificateAuthority();
  hosted = await startHostedPipeline({ key: HOSTED_KEY, tls: ca.issueServer('hosted') });
  receiver = await startWebhookReceiver();
  dir = mkdtempSync(join(tmpdir(), 'voice-kill-'));
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await Promise.all([hosted?.close(), receiver?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

function startMain(env: Record<string, string>): { child: ChildProcess; output: () => string; exited: Promise<unknown> } {
  let output = '';
  const child = spawn(process.execPath, ['--import', 'tsx', 'api-stub/main.ts'], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  children.push(child);
  return { child, output: () => output, exited: new Promise((resolve) => child.on('exit', resolve)) };
}

describe('a webhook attempt cut short by a kill', () => {
  it('has its row in webhook_deliveries (in_flight), marked interrupted when the event is sent again', async () => {
    const seedFile = join(dir, 'seed.json');
    writeFileSync(seedFile, JSON.stringify(routingSeed(receiver.url)));
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const dbPath = join(dir, 'api-stub.sqlite');
    const env = {
      PORT: String(port),
      API_STUB_DB: dbPath,
      API_STUB_SEED: seedFile,
      PIPELINE_KEK: randomBytes(32).toString('base64'),
      HOSTED_PIPELINE_URL: hosted.url,
      HOSTED_PIPELINE_KEY: HOSTED_KEY,
      EGRESS_ALLOW_HOSTS: '127.0.0.1',
      PIPELINE_EXTRA_CA_FILE: ca.certFile,
      WEBHOOK_POLL_INTERVAL_MS: '100',
    };
    const first = startMain(env);
    await waitFor(async () => (await fetch(`${url}/readyz`).catch(() => null))?.ok === true, {
      timeoutMs: 30_000,
      what: `the api-stub (${first.output().slice(-300)})`,
    });

    receiver.setMode({ kind: 'hang' });
    const created = await call('POST', `${url}/api/v2/sdk/sessions`, { publishableKey: A.pk, interviewId: A.dpl });
    const id = created.body.sessionId as string;
    expect((await call('POST', `${url}/api/v2/sdk/connect`, { publishableKey: A.pk, interviewId: A.dpl, sessionId: id })).status).toBe(200);
    const report = await call(
      'POST',
      `${url}/api/v2/worker/sessions/${id}/outcome`,
      { status: 'completed', response: { transcriptKey: 's3://t/1', summary: 'ok' } },
      { authorization: `Bearer ${reportTokenOf([hosted], id)}` },
    );
    expect(report.status).toBe(200);
    // The attempt reached the receiver, which holds it: kill the api-stub mid-attempt.
    await receiver.waitForCount(1, 15_000);
    first.child.kill('SIGKILL');
    await first.exited;

    let db = openDatabase(dbPath);
    const rows = () =>
      db
        .prepare('SELECT event_type, attempt, outcome, error, status_code FROM webhook_deliveries ORDER BY seq')
        .all()
        .map((r) => ({ ...r }));
    expect(rows()).toEqual([{ event_type: 'interview.completed', attempt: 1, outcome: 'in_flight', error: null, status_code: null }]);
    // The lease of the dead dispatcher would lapse in timeout + 30 s; lapse it now rather than wait.
    db.prepare('UPDATE webhook_outbox SET lease_until = 0').run();
    db.close();

    receiver.setMode({ kind: 'status', status: 200 });
    const second = startMain(env);
    await receiver.waitForCount(2, 30_000);
    db = openDatabase(dbPath);
    try {
      await waitFor(() => rows().some((r) => r.outcome === 'delivered'), {
        timeoutMs: 10_000,
        what: `the second attempt settled (${second.output().slice(-300)})`,
      });
      expect(rows()).toEqual([
        { event_type: 'interview.completed', attempt: 1, outcome: 'interrupted', error: INTERRUPTED_ERROR, status_code: null },
        // The attempt after the cut-short one is the second, not 1 again (issue 41).
        { event_type: 'interview.completed', attempt: 2, outcome: 'delivered', error: null, status_code: 200 },
      ]);
    } finally {
      db.close();
    }
    // The log endpoint shows both.
    const log = await call('GET', `${url}/api/v2/workspace/webhook-deliveries`, undefined, { authorization: `Bearer ${A.sk}` });
    expect(log.body.data.map((d: { outcome: string }) => d.outcome)).toEqual(['delivered', 'interrupted']);
    second.child.kill('SIGTERM');
    await second.exited;
  }, 90_000);
});
