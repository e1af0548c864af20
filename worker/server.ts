import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import express, { type RequestHandler } from 'express';
import { HttpError } from '../lib/errors.ts';
import { errorHandler, installClientErrorHandler, jsonBody, notFound } from '../lib/http.ts';
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
 * to its file-descriptor limit, and the management port's probes failed with it). Connections past
 * `maxConnections` are closed as they arrive; a connection that has not sent a whole request head
 * within `headersTimeoutMs` gets 408 and is closed; one idle between requests is closed after
 * `keepAliveTimeoutMs`. Room WebSockets are past their request and are never timed out here.
 */
export interface EdgeLimits {
  maxConnections: number;
  headersTimeoutMs: number;
  keepAliveTimeoutMs: number;
}

export function createEdge(options: EdgeOptions): Server {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  // Auth before the body parser: an unauthenticated caller never gets its body read.
  app.post('/', options.auth, jsonBody({ limit: `${options.bodyLimitBytes}b`, tooLargeCode: 'payload_too_large' }), options.spawn);
  app.all('/', (req, _res, next) => next(new HttpError('method_not_allowed', `${req.method} / is not supported; spawn with POST /.`)));
  app.use(notFound);
  app.use(errorHandler(options.log));

  const { maxConnections, headersTimeoutMs, keepAliveTimeoutMs } = options.limits;
  const timeouts = {
    headersTimeout: headersTimeoutMs,
    // A spawn body is at most SPAWN_BODY_LIMIT_BYTES: a client that takes longer than this to send one is stalling.
    requestTimeout: headersTimeoutMs + 30_000,
    keepAliveTimeout: keepAliveTimeoutMs,
    // How often the two timeouts above are checked (Node's default, 30 s, would let idle ones pile up).
    connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(headersTimeoutMs / 2))),
  };
  const server = options.tls
    ? // A TLS handshake never begun is bounded the same way (Node's default would hold it for 120 s).
      createHttpsServer({ cert: readFileSync(options.tls.certFile), key: readFileSync(options.tls.keyFile), handshakeTimeout: headersTimeoutMs, ...timeouts }, app)
    : createHttpServer(timeouts, app);
  server.maxConnections = maxConnections;
  let warnedAt = 0;
  server.on('drop', () => {
    if (Date.now() - warnedAt < 60_000) return; // once a minute: a flood must not flood the log too
    warnedAt = Date.now();
    options.log.warn('the public port is at its connection cap (PUBLIC_MAX_CONNECTIONS); new connections are closed until idle ones time out', { maxConnections });
  });
  installClientErrorHandler(server);
  // That handler answers a timed-out or malformed request and half-closes; a peer that never reads
  // the answer would keep its socket (and a file descriptor, and a place under the cap): it goes after a grace.
  server.on('clientError', (_err, socket: Duplex) => void setTimeout(() => socket.destroy(), 2000).unref());
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
  return `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`;
}
