import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../api-stub/app.ts';
import { loadConfig } from '../../api-stub/config.ts';
import { openDatabase, type Database } from '../../api-stub/db/database.ts';
import { applySeed, parseSeed } from '../../api-stub/seed.ts';
import { createLogger } from '../../lib/log.ts';
import { startHostedPipeline } from '../fakes/hosted-pipeline.ts';
import type { SpawnServer } from '../fakes/spawn-server.ts';
import { launchChromium, type Chromium } from '../harness/browser.ts';
import { startHostPage, type HostPage } from '../harness/host-page.ts';
import { createCertificateAuthority } from '../harness/pki.ts';
import { waitFor } from '../harness/ports.ts';

/**
 * A session whose pipeline answers an `https:` room (a hosted video-room provider's): the page loads
 * the provider's client bundle, only then, and never opens a local-room WebSocket. This machine
 * cannot reach the provider, so the join fails, and the page must say so and offer Retry.
 */
const PK = 'pk_test_hostedroom0000000';
let dir: string;
let db: Database;
let api: Server;
let pipeline: SpawnServer;
let host: HostPage;
let browser: Chromium;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hosted-room-'));
  const ca = createCertificateAuthority();
  pipeline = await startHostedPipeline({ key: 'hosted-key-0123456789abcdef', tls: ca.issueServer('pipeline') });
  db = openDatabase(join(dir, 'api.sqlite'));
  applySeed(
    db,
    parseSeed({
      workspaces: [
        {
          id: 'ws_hosted',
          name: 'Hosted room test',
          keys: { publishable: [PK], secret: ['sk_test_hostedroom0000000'] },
          deployments: [
            {
              id: 'dpl_hosted',
              status: 'ACTIVE',
              interview: { title: 'Hosted room', intro: 'Hi.', questions: [{ id: 'q1', text: 'Why?' }], closing: 'Bye.' },
            },
          ],
        },
      ],
    }),
    Date.now(),
  );
  const config = loadConfig({
    PORT: '0',
    API_STUB_DB: join(dir, 'api.sqlite'),
    HOSTED_PIPELINE_URL: `${pipeline.url}/`,
    HOSTED_PIPELINE_KEY: 'hosted-key-0123456789abcdef',
    EGRESS_ALLOW_HOSTS: '127.0.0.1',
    PIPELINE_EXTRA_CA_FILE: ca.certFile,
  });
  api = createServer(createApp(config, { db, clock: Date.now, log: createLogger({ name: 'api-stub', level: 'warn' }) }));
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  host = await startHostPage(`http://127.0.0.1:${(api.address() as AddressInfo).port}`, PK);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await host?.close();
  await new Promise<void>((resolve) => (api ? api.close(() => resolve()) : resolve()));
  await pipeline?.close();
  db?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a hosted-provider room', () => {
  it('loads the provider client only for an https room, and reports a join it cannot make with Retry', async () => {
    const page = await browser.context.newPage();
    const requested: string[] = [];
    const sockets: string[] = [];
    page.on('request', (r) => requested.push(new URL(r.url()).pathname));
    page.on('websocket', (ws) => sockets.push(ws.url()));
    await page.goto(host.url);
    await page.waitForFunction(() => (window as unknown as { hostReady?: boolean }).hostReady === true);
    await page.evaluate(() =>
      (window as unknown as { startInterview(i: string, m: object): Promise<string> }).startInterview('dpl_hosted', {}),
    );
    const frame = page.frameLocator('iframe');
    await expect.poll(() => frame.locator('#start').isVisible(), { timeout: 15_000 }).toBe(true);
    expect(requested).not.toContain('/respondent/assets/daily-room.js');

    await frame.locator('#start').click();
    await expect.poll(() => frame.locator('#interview').getAttribute('data-state'), { timeout: 45_000 }).toBe('error');
    expect(requested).toContain('/respondent/assets/daily-room.js');
    expect(sockets).toEqual([]);
    expect(pipeline.requests.length).toBe(1);
    const events = await page.evaluate(
      () => (window as unknown as { serviceEvents: Array<{ type: string; code?: string; retryable?: boolean }> }).serviceEvents,
    );
    expect(events.map((e) => e.type)).toEqual(['service:ready', 'service:connecting', 'service:error']);
    expect(events[2]).toMatchObject({ code: expect.stringMatching(/^room_/), retryable: true });
    await waitFor(async () => frame.locator('#retry').isVisible(), { timeoutMs: 5_000, what: 'the Retry button' });
    await page.close();
  }, 60_000);
});
