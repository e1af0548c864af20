import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { HttpError, type ErrorCode } from './errors.ts';
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

export function jsonBody(options: JsonBodyOptions): RequestHandler {
  const parse = express.json({ limit: options.limit, strict: true, type: () => true });
  return (req, res, next) => {
    // A body-less request (e.g. GET) is passed through untouched.
    if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') return next();
    parse(req, res, (err?: unknown) => {
      if (!err) return next();
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

/** The raw answer to a request Node's parser rejected, in the `{error, message}` shape. */
export function clientErrorResponse(err: ClientError): string {
  const [status, reason, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', 'The request headers are too large.']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'The request was not received in time.']
        : [400, 'Bad Request', 'The request is not valid HTTP/1.1.'];
  const body = JSON.stringify({ error: 'invalid_request', message });
  return `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

/**
 * Node answers a request it cannot parse (bad request line, oversized headers) with a bare 400 or
 * 431. This gives those answers our JSON shape, where the socket can still take one.
 */
export function installClientErrorHandler(server: Server): void {
  server.on('clientError', (err: ClientError, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    socket.end(clientErrorResponse(err));
  });
}
