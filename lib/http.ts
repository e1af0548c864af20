import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { HttpError, type ErrorCode } from './errors.ts';
import { describeUnsafeNumber, findUnsafeNumber } from './json-numbers.ts';
import type { Logger } from './log.ts';

/**
 * HTTP edge helpers shared by the api-stub and the worker: a JSON body parser whose failures are
 * client errors in our shape, a 404 for unknown routes, and the one error renderer.
 */

export interface JsonBodyOptions {
  /** Largest accepted body, e.g. '64kb'. */
  limit: string;
  /** Code for an oversized body: the api-stub answers 400 invalid_request, the worker 413. */
  tooLargeCode: Extract<ErrorCode, 'invalid_request' | 'payload_too_large'>;
}

interface BodyParserError {
  type?: string;
  status?: number;
}

const RAW_TEXT = Symbol('raw JSON text');
type WithRawText = IncomingMessage & { [RAW_TEXT]?: string };

/** True when the request carries a body (RFC 9112 section 6.3: Transfer-Encoding, or a Content-Length above 0). */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

const LIMIT_UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 * 1024 };

/** '65536b', '64kb' or '1mb' in bytes (the forms our callers pass). */
function limitInBytes(limit: string): number {
  const match = /^(\d+)(b|kb|mb)$/i.exec(limit.trim());
  if (!match) throw new TypeError(`jsonBody: limit ${JSON.stringify(limit)} must be a number of b, kb or mb`);
  return Number(match[1]) * LIMIT_UNITS[match[2]!.toLowerCase()]!;
}

/**
 * Up to this many bytes, a body declared too large is still read (and dropped) before the answer:
 * closing a connection whose sender is still sending resets it, and the client may then lose the
 * answer. Above it, reading costs more than that risk is worth.
 */
export const DRAIN_REFUSED_BODY_MAX_BYTES = 1024 * 1024;

/**
 * A Content-Length above the limit and above what is worth reading, on a body sent as is (a
 * compressed body's length says nothing of its decoded size, which the parser bounds as it reads).
 */
function declaresFarTooMuch(req: IncomingMessage, limitBytes: number): boolean {
  const length = req.headers['content-length'];
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
  return (
    length !== undefined &&
    encoding === 'identity' &&
    /^\d+$/.test(length) &&
    Number(length) > Math.max(limitBytes, DRAIN_REFUSED_BODY_MAX_BYTES)
  );
}

export function jsonBody(options: JsonBodyOptions): RequestHandler {
  const limitBytes = limitInBytes(options.limit);
  const parse = express.json({
    limit: options.limit,
    strict: true,
    type: () => true,
    // Kept for the number check below, which needs the text as written.
    // JSON between systems is UTF-8 (RFC 8259 section 8.1); another charset is refused here.
    verify: (req, _res, buf, encoding) => {
      if (encoding && encoding.toLowerCase() !== 'utf-8' && encoding.toLowerCase() !== 'utf8')
        throw Object.assign(new Error('charset'), { type: 'charset.unsupported' });
      (req as WithRawText)[RAW_TEXT] = buf.toString('utf8');
    },
  });
  return (req, res, next) => {
    // A body-less request (e.g. GET) is passed through untouched.
    if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') return next();
    // Bodies are JSON sent as such (spec: "All bodies are JSON with Content-Type: application/json");
    // a body of another type, or of none, is refused before it is read.
    if (hasBody(req) && !req.is('application/json')) {
      const sent = req.get('Content-Type');
      const got = sent === undefined ? 'no Content-Type' : `Content-Type ${JSON.stringify(sent.slice(0, 100))}`;
      return next(new HttpError('unsupported_media_type', `Send the body as JSON with Content-Type: application/json (got ${got}).`));
    }
    // Refused from its declared length, before a byte of it is read (the parser would drain a body it
    // refuses to its end first: 10 GB declared, 10 GB read). The connection closes after the answer,
    // so Node does not read the rest of the body to keep it alive either.
    if (declaresFarTooMuch(req, limitBytes)) {
      res.setHeader('Connection', 'close');
      return next(new HttpError(options.tooLargeCode, `The request body is larger than ${options.limit}.`));
    }
    parse(req, res, (err?: unknown) => {
      if (!err) {
        const raw = (req as WithRawText)[RAW_TEXT];
        const unsafe = raw === undefined ? null : findUnsafeNumber(raw);
        if (unsafe) return next(new HttpError('invalid_request', describeUnsafeNumber(unsafe)));
        return next();
      }
      const e = err as BodyParserError;
      if (e.type === 'entity.too.large') {
        return next(new HttpError(options.tooLargeCode, `The request body is larger than ${options.limit}.`));
      }
      if (e.type === 'entity.parse.failed') {
        return next(new HttpError('invalid_request', 'The request body is not valid JSON.'));
      }
      if (e.type === 'encoding.unsupported' || e.type === 'charset.unsupported') {
        return next(new HttpError('invalid_request', 'The request body must be UTF-8 JSON.'));
      }
      if (e.type === 'request.aborted' || e.type === 'stream.not.readable') {
        return next(new HttpError('invalid_request', 'The request body could not be read.'));
      }
      // A body that its Content-Encoding does not decode (gzip that is not gzip, say): the
      // decompressor's error carries a 4xx status and no type. Still the client's mistake.
      if (typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
        return next(new HttpError('invalid_request', 'The request body could not be decoded with its Content-Encoding.'));
      }
      return next(err);
    });
  };
}

export const notFound: RequestHandler = (req, _res, next) => {
  next(new HttpError('not_found', `No route for ${req.method} ${req.path}.`));
};

/** Renders HttpError as `{error, message}`; anything else is logged and answered as internal_error. */
export function errorHandler(log: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (err instanceof HttpError) {
      for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
      res.status(err.status).json(err.toBody());
      return;
    }
    log.error('unhandled error', { method: req.method, path: req.path, err });
    res.status(500).json({ error: 'internal_error', message: 'An internal error occurred. Retry with exponential backoff.' });
  };
}

interface ClientError extends Error {
  code?: string;
}

/** A raw HTTP/1.1 answer in the `{error, message}` shape, written where no Express response exists. */
function rawAnswer(status: number, reason: string, code: ErrorCode, message: string): string {
  const body = JSON.stringify({ error: code, message });
  return (
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ` +
    `${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

/** The raw answer to a request Node's parser rejected, in the `{error, message}` shape. */
export function clientErrorResponse(err: ClientError): string {
  if (err.code === 'HPE_HEADER_OVERFLOW')
    return rawAnswer(431, 'Request Header Fields Too Large', 'headers_too_large', 'The request headers are too large.');
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return rawAnswer(408, 'Request Timeout', 'request_timeout', 'The request was not received in time.');
  return rawAnswer(400, 'Bad Request', 'invalid_request', 'The request is not valid HTTP/1.1.');
}

/**
 * Node answers a request it cannot parse (bad request line, oversized headers) with a bare 400 or
 * 431, and an HTTP/1.1 request without `Host` with a bare 400 too. This gives those answers our JSON
 * shape, where the socket can still take one: parser errors through `clientError`, and the missing
 * `Host` by turning Node's own check off and making it here, in front of the app.
 */
export function installClientErrorHandler(server: Server): void {
  server.on('clientError', (err: ClientError, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    socket.end(clientErrorResponse(err));
  });
  (server as Server & { requireHostHeader: boolean }).requireHostHeader = false;
  const app = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    // RFC 9112 section 3.2: a server must answer 400 to an HTTP/1.1 request that lacks Host.
    if (req.httpVersion === '1.1' && req.headers.host === undefined) {
      const body = JSON.stringify({
        error: 'invalid_request',
        message: 'An HTTP/1.1 request must carry a Host header (RFC 9112 section 3.2).',
      });
      res
        .writeHead(400, {
          'Content-Type': 'application/json; charset=utf-8',
          'Content-Length': Buffer.byteLength(body),
          Connection: 'close',
        })
        .end(body);
      return;
    }
    for (const listener of app) listener.call(server, req, res);
  });
}
