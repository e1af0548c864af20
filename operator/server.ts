/** The HTTP edge of the operator: /metrics, /healthz (alive) and /readyz (talking to the API server). */
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

export interface ProbeServer {
  port: number;
  close(): Promise<void>;
}

export async function startProbeServer(host: string, port: number, registry: Registry, ready: () => { ok: boolean; why: string }): Promise<ProbeServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET') {
      res.writeHead(405, { 'content-type': 'application/json', allow: 'GET' }).end(JSON.stringify({ error: 'method_not_allowed', message: 'use GET' }));
      return;
    }
    if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    } else if (path === '/readyz') {
      const r = ready();
      res.writeHead(r.ok ? 200 : 503, { 'content-type': 'text/plain' }).end(`${r.why}\n`);
    } else if (path === '/metrics') {
      registry.metrics().then(
        (body) => res.writeHead(200, { 'content-type': registry.contentType }).end(body),
        (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(String(err)),
      );
    } else {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not_found', message: `no route ${path}; try /metrics, /healthz or /readyz` }));
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : port,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
