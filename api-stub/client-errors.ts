import type { ErrorRequestHandler } from 'express';
import { HttpError } from '../lib/errors.ts';

/**
 * Errors that Express's own machinery raises for a client's mistake, as our 4xx. Today the only one
 * is a path parameter that is not valid percent-encoding (`/s/%E0%A4%A`): the router throws a
 * URIError marked 400 before any handler runs. Anything else goes on to the one error renderer.
 */
export const translateClientErrors: ErrorRequestHandler = (err: unknown, _req, _res, next) => {
  if (err instanceof URIError) {
    return next(new HttpError('invalid_request', 'The request path is not valid percent-encoding (RFC 3986 section 2.1).'));
  }
  next(err);
};
