import { createServer, type Server } from 'node:http';
import { capConnections, serverTimeoutOptions, type ListenLimits } from '../lib/listen-limits.ts';
import type { Logger } from '../lib/log.ts';
import type { SpeechMetrics } from './metrics.ts';

/**
 * The management port (SPEECH_METRICS_PORT): /metrics, /healthz, /readyz over plain HTTP, apart from the
 * public port. Ready once the models are loaded (they are before the port opens) and until
 * shutdown begins. Errors here use the project's `{error, message}` shape.
 */
export function createSpeechManagementServer(options: {
  metrics: SpeechMetrics;
  ready: () => boolean;
  log: Logger;
  limits: ListenLimits;
}): Server {
  const server = createServer(serverTimeoutOptions(options.limits), (req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    if (req.method !== 'GET') return json(405, { error: 'method_not_allowed', message: 'Use GET.' });
    if (path === '/healthz') return json(200, { status: 'ok' });
    if (path === '/readyz')
      return options.ready()
        ? json(200, { status: 'ready' })
        : json(503, { error: 'unavailable', message: 'The speech server is shutting down.' });
    if (path === '/metrics') {
      options.metrics.registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': options.metrics.registry.contentType });
          res.end(text);
        },
        () => json(500, { error: 'internal_error', message: 'The metrics could not be collected.' }),
      );
      return;
    }
    json(404, { error: 'not_found', message: `No route for GET ${path.slice(0, 100)}.` });
  });
  // A few probes and a scraper: a small cap (SPEECH_METRICS_MAX_CONNECTIONS), idle sockets evicted for a probe.
  capConnections(server, options.limits, { log: options.log, portName: 'the management port', variable: 'SPEECH_METRICS_MAX_CONNECTIONS' });
  return server;
}
