import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import express, { type RequestHandler } from 'express';
import { HttpError } from '../lib/errors.ts';
import { errorHandler, installClientErrorHandler, jsonBody, notFound } from '../lib/http.ts';
import { capConnections, serverTimeoutOptions, type ListenLimits } from '../lib/listen-limits.ts';
import type { Logger } from '../lib/log.ts';
import type { RoomServer } from './rooms/provider.ts';

/**
 * The public HTTP edge (PORT): the spawn route and WebSocket upgrades for local rooms, over TLS
 * when TLS_CERT_FILE/TLS_KEY_FILE are set. Probes and metrics are on the management port
 * (management.ts); here they are 404. Nothing here knows about Redis or bots.
 */
export interface EdgeOptions {
  log: Logger;
  tls: { certFile: string; keyFile: string } | null;
  bodyLimitBytes: number;
  auth: RequestHandler;
  spawn: RequestHandler;
  rooms: RoomServer | null;
  limits: EdgeLimits;
}

/**
 * What a stranger can hold on the public port (issue 19: 20,000 idle connections took the process
 * to its file-descriptor limit, and the management port's probes failed with it; issue 41: at the
 * cap, idle sockets kept spawns out). The cap, its idle-first eviction and the timeouts are the
 * shared ones of lib/listen-limits.ts. Room WebSockets are past their request and are never timed out.
 */
export type EdgeLimits = ListenLimits;

export function createEdge(options: EdgeOptions): Server {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  // Auth before the body parser: an unauthenticated caller never gets its body read.
  app.post('/', options.auth, jsonBody({ limit: `${options.bodyLimitBytes}b`, tooLargeCode: 'payload_too_large' }), options.spawn);
  app.all('/', (req, _res, next) => next(new HttpError('method_not_allowed', `${req.method} / is not supported; spawn with POST /.`)));
  app.use(notFound);
  app.use(errorHandler(options.log));

  const timeouts = serverTimeoutOptions(options.limits);
  const server = options.tls
    ? // A TLS handshake never begun is bounded the same way (Node's default would hold it for 120 s).
      createHttpsServer(
        {
          cert: readFileSync(options.tls.certFile),
          key: readFileSync(options.tls.keyFile),
          handshakeTimeout: options.limits.headersTimeoutMs,
          ...timeouts,
        },
        app,
      )
    : createHttpServer(timeouts, app);
  capConnections(server, options.limits, {
    log: options.log,
    portName: 'the public port',
    variable: 'PUBLIC_MAX_CONNECTIONS',
    upgrades: true,
  });
  installClientErrorHandler(server);
  // Bytes from anyone, before any token check: nothing in here may throw past this handler.
  server.on('upgrade', (req, socket, head) => {
    socket.on('error', () => undefined); // a reset socket is not our failure
    try {
      if (options.rooms?.handleUpgrade(req, socket, head)) return;
      socket.end(rawJsonResponse(404, 'Not Found', { error: 'not_found', message: 'No WebSocket endpoint at this path.' }));
    } catch (err) {
      options.log.warn('WebSocket upgrade failed', { err });
      socket.destroy();
    }
  });
  return server;
}

function rawJsonResponse(status: number, reason: string, body: { error: string; message: string }): string {
  const text = JSON.stringify(body);
  return (
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: ` +
    `close\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`
  );
}
