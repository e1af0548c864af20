import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A customer's web app, on its own origin (`http://localhost:<port>`, while the api-stub is on
 * 127.0.0.1), that embeds an interview with the browser SDK served by the api-stub. It records
 * every SDK event in `window.serviceEvents` and exposes `window.startInterview(interviewId)`.
 */
export interface HostPage {
  url: string;
  origin: string;
  close(): Promise<void>;
}

function html(apiBase: string, publishableKey: string): string {
  const config = JSON.stringify({ apiBase, publishableKey }).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Acme app</title>
<style>body{font-family:system-ui,sans-serif;margin:0;background:#fafafa}header{padding:12px 20px;background:#222;color:#fff}#slot{height:680px}</style>
</head><body><header>Acme app: tell us about your onboarding</header><div id="slot"></div>
<script type="module">
const config = ${config};
const { createServiceClient } = await import(config.apiBase + '/sdk/browser.js');
window.serviceEvents = [];
const client = createServiceClient({ publishableKey: config.publishableKey, baseUrl: config.apiBase });
window.startInterview = async (interviewId, metadata) => {
  const mounted = await client.start('#slot', { interviewId, metadata }, { onEvent: (e) => window.serviceEvents.push(e) });
  window.mounted = mounted;
  return mounted.sessionId;
};
window.hostReady = true;
</script></body></html>`;
}

export async function startHostPage(apiBase: string, publishableKey: string): Promise<HostPage> {
  const server: Server = createServer((req, res) => {
    if (req.url === '/' || req.url?.startsWith('/?')) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(html(apiBase, publishableKey));
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://localhost:${port}`;
  return {
    url: `${origin}/`,
    origin,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
