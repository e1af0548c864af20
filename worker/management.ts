import { createServer, type Server } from 'node:http';
import express from 'express';
import { errorHandler, installClientErrorHandler, notFound } from '../lib/http.ts';
import type { Logger } from '../lib/log.ts';
import type { WorkerMetrics } from './telemetry/metrics.ts';

/**
 * The management port (METRICS_PORT, contract C2): /metrics, /healthz and /readyz over plain
 * HTTP, for the kubelet's probes and for scraping. It is a port of its own so that the public
 * port (Service 443, Ingress) never exposes them.
 */
export interface ManagementOptions {
  log: Logger;
  metrics: WorkerMetrics;
  ready: () => boolean;
}

export function createManagementServer(options: ManagementOptions): Server {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.get('/healthz', (_req, res) => void res.json({ status: 'ok' }));
  app.get('/readyz', (_req, res) => {
    if (options.ready()) return void res.json({ status: 'ready' });
    res.status(503).json({ error: 'unavailable', message: 'The worker is not taking spawns (draining, or its session store is unreachable).' });
  });
  app.get('/metrics', async (_req, res, next) => {
    try {
      res.setHeader('content-type', options.metrics.registry.contentType);
      res.send(await options.metrics.registry.metrics());
    } catch (err) {
      next(err);
    }
  });
  app.use(notFound);
  app.use(errorHandler(options.log));
  const server = createServer(app);
  installClientErrorHandler(server);
  return server;
}
