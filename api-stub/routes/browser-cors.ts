import type { RequestHandler } from 'express';

/**
 * CORS for the paths a browser may call with a publishable key (session creation and connect):
 * every answer, errors included, carries `Access-Control-Allow-Origin: *`, and a preflight answers
 * 204 for a JSON POST. The headers the browser SDK reads are exposed. Paths that take a secret key
 * (session retrieval) use no CORS at all.
 */
export const browserCors: RequestHandler = (req, res, next) => {
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Expose-Headers', 'Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, Request-Id');
  if (req.method === 'OPTIONS') {
    res.setHeader('Access-Control-Allow-Methods', 'POST');
    res.setHeader('Access-Control-Allow-Headers', 'Content-Type, Idempotency-Key');
    res.setHeader('Access-Control-Max-Age', '600');
    res.status(204).end();
    return;
  }
  next();
};
