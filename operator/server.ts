/** The HTTP edge of the operator: /metrics, /healthz (alive) and /readyz (talking to the API server). */
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';
import type { MetricsAuthorizer } from './metrics-auth.ts';

export interface ProbeServer {
  port: number;
  close(): Promise<void>;
}

/**
 * `authorize`: who may read /metrics (metrics-auth.ts); absent, anyone who reaches the port may.
 * The probes stay open: the kubelet sends no token.
 */
export async function startProbeServer(
  host: string,
  port: number,
  registry: Registry,
  ready: () => { ok: boolean; why: string },
  authorize?: MetricsAuthorizer,
): Promise<ProbeServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET') {
      res
        .writeHead(405, { 'content-type': 'application/json', allow: 'GET' })
        .end(JSON.stringify({ error: 'method_not_allowed', message: 'use GET' }));
      return;
    }
    if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    } else if (path === '/readyz') {
      const r = ready();
      res.writeHead(r.ok ? 200 : 503, { 'content-type': 'text/plain' }).end(`${r.why}\n`);
    } else if (path === '/metrics') {
      const allowed = authorize ? authorize(req.headers.authorization) : Promise.resolve({ status: 200 as const });
      allowed.then(
        (decision) => {
          if (decision.status !== 200) {
            const error =
              decision.status === 401
                ? 'unauthenticated'
                : decision.status === 403
                  ? 'forbidden'
                  : decision.status === 429
                    ? 'rate_limited'
                    : 'unavailable';
            const headers = {
              'content-type': 'application/json',
              ...(decision.status === 401 ? { 'www-authenticate': 'Bearer' } : {}),
              ...(decision.status === 429 ? { 'retry-after': '5' } : {}),
            };
            return void res.writeHead(decision.status, headers).end(JSON.stringify({ error, message: decision.message }));
          }
          return registry.metrics().then(
            (body) => res.writeHead(200, { 'content-type': registry.contentType }).end(body),
            (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(String(err)),
          );
        },
        (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(String(err)),
      );
    } else {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: 'not_found', message: `no route ${path}; try /metrics, /healthz or /readyz` }));
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : port,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
