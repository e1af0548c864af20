import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FrameLocator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../api-stub/app.ts';
import { loadConfig } from '../../api-stub/config.ts';
import { openDatabase, type Database } from '../../api-stub/db/database.ts';
import { applySeed, parseSeed } from '../../api-stub/seed.ts';
import { getSession } from '../../api-stub/store/sessions.ts';
import { createLogger } from '../../lib/log.ts';
import { launchChromium, type Chromium } from '../harness/browser.ts';
import { startHostPage, type HostPage } from '../harness/host-page.ts';
import { freePort, waitFor } from '../harness/ports.ts';

/**
 * The browser SDK and the respondent page in real Chromium against the real api-stub (no worker
 * needed): a host page on another origin creates a session with the SDK, the iframe opens the page
 * (CLICKED), events reach the host with origin checks, and the page's states render.
 */
const PK = 'pk_test_pagetest00000000';
const SK = 'sk_test_pagetest00000000';
const ARTIFACTS = join(process.cwd(), 'test-artifacts', 'respondent-page');

let dir: string;
let db: Database;
let api: Server;
let apiBase: string;
let host: HostPage;
let browser: Chromium;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  dir = mkdtempSync(join(tmpdir(), 'respondent-page-'));
  db = openDatabase(join(dir, 'api.sqlite'));
  applySeed(
    db,
    parseSeed({
      workspaces: [
        {
          id: 'ws_page',
          name: 'Page test',
          keys: { publishable: [PK], secret: [SK] },
          deployments: [
            {
              id: 'dpl_page',
              status: 'ACTIVE',
              interview: {
                title: 'Onboarding feedback',
                intro: 'Hi.',
                questions: [{ id: 'q1', text: 'How did you hear about us?' }],
                closing: 'Thanks.',
              },
            },
          ],
        },
      ],
    }),
    Date.now(),
  );
  // The hosted pipeline's address has nothing listening: every connect answers worker_unreachable.
  const deadPort = await freePort();
  const config = loadConfig({
    PORT: '0',
    API_STUB_DB: join(dir, 'api.sqlite'),
    HOSTED_PIPELINE_URL: `https://127.0.0.1:${deadPort}/`,
    HOSTED_PIPELINE_KEY: 'hosted-key-0123456789abcdef',
    EGRESS_ALLOW_HOSTS: '127.0.0.1',
  });
  const app = createApp(config, { db, clock: Date.now, log: createLogger({ name: 'api-stub', level: 'warn' }) });
  api = createServer(app);
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  apiBase = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  host = await startHostPage(apiBase, PK);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await host?.close();
  await new Promise<void>((resolve) => (api ? api.close(() => resolve()) : resolve()));
  db?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

type Events = Array<{ type: string; sessionId: string; code?: string; retryable?: boolean }>;
const events = (page: Page): Promise<Events> => page.evaluate(() => (window as unknown as { serviceEvents: Events }).serviceEvents);

/** Waits for the status orb's colour transition to end, so that screenshots show the state's colour. */
const settled = (frame: FrameLocator, colour: string): Promise<void> =>
  expect.poll(() => frame.locator('.orb').evaluate((el) => getComputedStyle(el).backgroundColor), { interval: 50 }).toBe(colour);

async function openHost(): Promise<{ page: Page; sessionId: string }> {
  const page = await browser.context.newPage();
  await page.goto(host.url);
  await page.waitForFunction(() => (window as unknown as { hostReady?: boolean }).hostReady === true);
  const sessionId = await page.evaluate(() =>
    (window as unknown as { startInterview(id: string, m: object): Promise<string> }).startInterview('dpl_page', { user: 'u_1' }),
  );
  return { page, sessionId };
}

describe('browser SDK and respondent page', () => {
  it('creates a session, mounts the page in an iframe, marks it CLICKED and reports service:ready to the host', async () => {
    const { page, sessionId } = await openHost();
    expect(sessionId).toMatch(/^inv_/);
    await waitFor(async () => (await events(page)).some((e) => e.type === 'service:ready'), {
      timeoutMs: 15_000,
      what: 'service:ready at the host page',
    });
    expect((await events(page))[0]).toMatchObject({ type: 'service:ready', sessionId });

    const iframe = page.locator('iframe');
    expect(await iframe.getAttribute('allow')).toBe('microphone; autoplay');
    const src = new URL((await iframe.getAttribute('src'))!);
    expect(src.origin).toBe(apiBase);
    expect(src.searchParams.get('from')).toBe('sdk');
    expect(src.searchParams.get('parentOrigin')).toBe(host.origin);

    const frame = page.frameLocator('iframe');
    await expect.poll(() => frame.locator('#interview').getAttribute('data-state')).toBe('ready');
    await expect.poll(() => frame.locator('#start').isVisible()).toBe(true);
    expect(await frame.locator('#state-title').textContent()).toBe('Ready when you are');
    expect(getSession(db, sessionId)?.status).toBe('CLICKED');
    await page.screenshot({ path: join(ARTIFACTS, 'ready.png') });
    await page.close();
  });

  it('ignores messages that do not come from the iframe, even with the right shape', async () => {
    const { page, sessionId } = await openHost();
    await waitFor(async () => (await events(page)).length > 0, { timeoutMs: 15_000, what: 'the first event' });
    await page.evaluate(
      (id) => window.postMessage({ source: 'service-respondent', type: 'service:completed', sessionId: id, at: 0 }, '*'),
      sessionId,
    );
    // The forged message would have landed by the time a round trip through the page's event loop is done.
    await page.evaluate(() => new Promise((r) => setTimeout(r, 50)));
    expect((await events(page)).map((e) => e.type)).not.toContain('service:completed');
    await page.close();
  });

  it('shows worker_unreachable with a focused Retry when the pipeline does not answer, and retries on click', async () => {
    const { page, sessionId } = await openHost();
    const frame = page.frameLocator('iframe');
    await frame.locator('#start').click();
    await expect.poll(() => frame.locator('#interview').getAttribute('data-state'), { timeout: 15_000 }).toBe('error');
    const error = (await events(page)).find((e) => e.type === 'service:error');
    expect(error).toMatchObject({ sessionId, code: 'worker_unreachable', retryable: true });
    expect(await frame.locator('#state-detail').textContent()).toMatch(/unreachable/i);
    expect(await frame.locator('#retry').isVisible()).toBe(true);
    expect(await frame.locator('#retry').evaluate((el) => el === document.activeElement)).toBe(true);
    expect((await events(page)).map((e) => e.type).slice(0, 3)).toEqual(['service:ready', 'service:connecting', 'service:error']);
    await settled(frame, 'rgb(179, 38, 30)');
    await page.screenshot({ path: join(ARTIFACTS, 'error.png') });

    await frame.locator('#retry').click();
    await waitFor(async () => (await events(page)).filter((e) => e.type === 'service:error').length === 2, {
      timeoutMs: 15_000,
      what: 'the retry to fail again',
    });
    expect((await events(page)).map((e) => e.type).slice(3)).toEqual(['service:connecting', 'service:error']);
    // Connect failed, so the session never started.
    expect(getSession(db, sessionId)?.status).toBe('CLICKED');
    await page.close();
  });

  it('can be started from the keyboard alone, announces its state politely, and fits a phone screen', async () => {
    const { page } = await openHost();
    await page.setViewportSize({ width: 360, height: 740 });
    const frame = page.frameLocator('iframe');
    await expect.poll(() => frame.locator('#start').isVisible()).toBe(true);
    expect(await frame.locator('[role="status"]').getAttribute('aria-live')).toBe('polite');
    expect(await frame.locator('#captions').getAttribute('role')).toBe('log');
    expect(await frame.locator('html').getAttribute('lang')).toBe('en');
    // Nothing overflows sideways on a narrow screen, and the Start button is a comfortable target.
    expect(await frame.locator('body').evaluate((b) => b.scrollWidth <= b.clientWidth)).toBe(true);
    expect((await frame.locator('#start').boundingBox())!.height).toBeGreaterThanOrEqual(44);
    await page.screenshot({ path: join(ARTIFACTS, 'ready-phone.png') });
    await frame.locator('#start').focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => frame.locator('#interview').getAttribute('data-state'), { timeout: 15_000 }).toBe('error');
    await page.close();
  });

  it('opened without the SDK (no publishable key in the fragment), the page says how to open it and offers no Start', async () => {
    const { page, sessionId } = await openHost();
    const direct = await browser.context.newPage();
    await direct.goto(`${apiBase}/s/${sessionId}?from=sdk`);
    await expect.poll(() => direct.locator('#interview').getAttribute('data-state')).toBe('closed');
    expect(await direct.locator('#start').isVisible()).toBe(false);
    expect(await direct.locator('#state-detail').textContent()).toContain('Open this interview from the app');
    await direct.close();
    await page.close();
  });

  it('sessionUrl alone starts the interview: opened directly (an email link) and in a plain iframe without the SDK', async () => {
    const created = (await (
      await fetch(`${apiBase}/api/v2/sdk/sessions`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ publishableKey: PK, interviewId: 'dpl_page' }),
      })
    ).json()) as { sessionId: string; sessionUrl: string };
    expect(created.sessionUrl).toMatch(/#k=[A-Za-z0-9_-]{43}$/);
    // Opened as a link: no SDK, no publishable key anywhere.
    const direct = await browser.context.newPage();
    await direct.goto(created.sessionUrl);
    await expect.poll(() => direct.locator('#interview').getAttribute('data-state')).toBe('ready');
    const connects: Array<Record<string, unknown>> = [];
    direct.on('request', (r) => {
      if (r.url().endsWith('/api/v2/sdk/connect')) connects.push(JSON.parse(r.postData() ?? '{}') as Record<string, unknown>);
    });
    await direct.locator('#start').click();
    // The hosted pipeline is down in this suite: reaching worker_unreachable proves connect accepted the link.
    await expect.poll(() => direct.locator('#interview').getAttribute('data-state'), { timeout: 15_000 }).toBe('error');
    expect(await direct.locator('#state-detail').textContent()).toMatch(/unreachable/i);
    expect(connects).toHaveLength(1);
    expect(connects[0]).not.toHaveProperty('publishableKey');
    expect(connects[0]).toMatchObject({ sessionId: created.sessionId, sessionToken: expect.any(String) });
    expect(getSession(db, created.sessionId)?.status).toBe('CLICKED');
    await direct.close();

    // Shown by a page of another origin in a plain iframe, without the browser SDK.
    const plain = await browser.context.newPage();
    await plain.goto(host.url);
    await plain.evaluate((src) => {
      document.body.innerHTML = '';
      const iframe = document.createElement('iframe');
      iframe.src = src;
      iframe.allow = 'microphone; autoplay';
      iframe.style.height = '600px';
      document.body.appendChild(iframe);
    }, created.sessionUrl);
    const frame = plain.frameLocator('iframe');
    await expect.poll(() => frame.locator('#interview').getAttribute('data-state'), { timeout: 15_000 }).toBe('ready');
    await frame.locator('#start').click();
    await expect.poll(() => frame.locator('#interview').getAttribute('data-state'), { timeout: 15_000 }).toBe('error');
    expect(await frame.locator('#state-detail').textContent()).toMatch(/unreachable/i);
    await plain.close();

    // A link whose capability was tampered with is refused, and the page says so without Retry.
    const tampered = await browser.context.newPage();
    await tampered.goto(created.sessionUrl.replace(/#k=.*/, `#k=${'A'.repeat(43)}`));
    await tampered.locator('#start').click();
    await expect.poll(() => tampered.locator('#interview').getAttribute('data-state'), { timeout: 15_000 }).toBe('error');
    expect(await tampered.locator('#state-detail').textContent()).toMatch(/link is not valid/);
    expect(await tampered.locator('#retry').isVisible()).toBe(false);
    await tampered.close();
  });

  it('says how to allow a blocked microphone, offers Retry, and never calls connect', async () => {
    const denied = await launchChromium({ denyMicrophone: true });
    try {
      const page = await denied.context.newPage();
      await page.goto(host.url);
      await page.waitForFunction(() => (window as unknown as { hostReady?: boolean }).hostReady === true);
      const sessionId = await page.evaluate(
        (id) => (window as unknown as { startInterview(i: string, m: object): Promise<string> }).startInterview(id, {}),
        'dpl_page',
      );
      const frame = page.frameLocator('iframe');
      await frame.locator('#start').click();
      await expect.poll(() => frame.locator('#interview').getAttribute('data-state'), { timeout: 15_000 }).toBe('error');
      expect((await events(page)).find((e) => e.type === 'service:error')).toMatchObject({ code: 'microphone_denied', retryable: true });
      expect((await events(page)).map((e) => e.type)).not.toContain('service:connecting');
      expect(await frame.locator('#retry').isVisible()).toBe(true);
      expect(await frame.locator('#state-detail').textContent()).toMatch(/Allow it in your browser/);
      expect(getSession(db, sessionId)?.status).toBe('CLICKED');
      await settled(frame, 'rgb(179, 38, 30)');
      await page.screenshot({ path: join(ARTIFACTS, 'microphone-denied.png') });
    } finally {
      await denied.close();
    }
  });

  it('answers an unknown session with a 404 page for browsers and the JSON error shape for others', async () => {
    const page = await browser.context.newPage();
    const response = await page.goto(`${apiBase}/s/inv_doesnotexist?from=sdk`);
    expect(response?.status()).toBe(404);
    expect(await page.locator('h1').textContent()).toBe('Interview not found');
    await page.close();
    const json = await fetch(`${apiBase}/s/inv_doesnotexist`, { headers: { accept: 'application/json' } });
    expect(json.status).toBe(404);
    expect(await json.json()).toMatchObject({ error: 'session_not_found' });
    const bad = await fetch(`${apiBase}/s/%3Cscript%3E`, { headers: { accept: 'text/html' } });
    expect(bad.status).toBe(404);
    expect(await bad.text()).not.toContain('<script>');
  });

  it('the SDK rejects a secret key and surfaces the service error of a bad interview id', async () => {
    const page = await browser.context.newPage();
    await page.goto(host.url);
    await page.waitForFunction(() => (window as unknown as { hostReady?: boolean }).hostReady === true);
    // A string, not a function: the test runner rewrites dynamic imports inside functions.
    const result = (await page.evaluate(`(async () => {
      const { createServiceClient } = await import(${JSON.stringify(apiBase)} + '/sdk/browser.js');
      const out = [];
      try { createServiceClient({ publishableKey: 'sk_test_secret0000000', baseUrl: ${JSON.stringify(apiBase)} }); } catch (err) { out.push(err.name); }
      // No baseUrl: the SDK talks to the origin it was loaded from (the api-stub), not the host page's.
      const client = createServiceClient({ publishableKey: '${PK}' });
      try { await client.createSession({ interviewId: 'dpl_nope' }); } catch (err) { out.push(err.name + ':' + err.status + ':' + err.code); }
      const created = await client.createSession({ interviewId: 'dpl_page' });
      out.push(created.sessionUrl.startsWith(${JSON.stringify(apiBase)} + '/s/inv_') ? 'sessionUrl ok' : created.sessionUrl);
      return out;
    })()`)) as string[];
    expect(result).toEqual(['TypeError', 'ServiceError:404:interview_not_found', 'sessionUrl ok']);
    await page.close();
  });
});
