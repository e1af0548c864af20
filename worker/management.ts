import { createServer, type Server } from 'node:http';
import express from 'express';
import { errorHandler, installClientErrorHandler, notFound } from '../lib/http.ts';
import { capConnections, serverTimeoutOptions, type ListenLimits } from '../lib/listen-limits.ts';
import type { Logger } from '../lib/log.ts';
import type { WorkerMetrics } from './telemetry/metrics.ts';

/**
 * The management port (METRICS_PORT, contract C2): /metrics, /healthz and /readyz over plain
 * HTTP, for the kubelet's probes and for scraping. It is a port of its own so that the public
 * port (Service 443, Ingress) never exposes them. It shares nothing with the public port but the
 * process: the public port's connection cap (server.ts) keeps the process's file descriptors for
 * this one, and its own small cap (METRICS_MAX_CONNECTIONS) and short timeouts keep a misbehaving
 * scraper from using them up: sockets that send nothing or never read are evicted for a probe, and
 * closed after the timeouts (lib/listen-limits.ts).
 */
export interface ManagementOptions {
  log: Logger;
  limits: ListenLimits;
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
    res
      .status(503)
      .json({ error: 'unavailable', message: 'The worker is not taking spawns (draining, or its session store is unreachable).' });
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
  const server = createServer(serverTimeoutOptions(options.limits), app);
  capConnections(server, options.limits, { log: options.log, portName: 'the management port', variable: 'METRICS_MAX_CONNECTIONS' });
  installClientErrorHandler(server);
  return server;
}
