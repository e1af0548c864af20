import { Router, type RequestHandler } from 'express';
import { z } from 'zod';
import { hasIdForm } from '../../lib/ids.ts';
import { authenticatePublishable } from '../auth.ts';
import { consumeRate, rateLimitError } from '../rate-limit/consume.ts';
import type { ApiStubConfig } from '../config.ts';
import { connectSession } from '../connect/connect.ts';
import type { AppDeps } from '../deps.ts';
import type { RoutingDeps } from '../routing-deps.ts';
import { metadataSchema } from '../sessions/schemas.ts';
import { apiJsonBody, parseBody } from '../validation.ts';

export const CONNECT_PATH = '/api/v2/sdk/connect';

/** The connect body (docs/connect.md). `metadata` is bounded by the same schema as on creation. */
export function connectBodySchema(metadataLimitBytes: number) {
  return z.strictObject({
    publishableKey: z.string().max(256),
    interviewId: z.string().refine((v) => hasIdForm(v, 'dpl'), { message: 'expected a dpl_<id> deployment id' }),
    sessionId: z.string().refine((v) => hasIdForm(v, 'inv'), { message: 'expected an inv_<id> session id' }),
    metadata: metadataSchema(metadataLimitBytes).optional(),
  });
}

/** The respondent page and client SDK call this from browsers: CORS on this path. */
const cors: RequestHandler = (req, res, next) => {
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Expose-Headers', 'Retry-After');
  if (req.method === 'OPTIONS') {
    res.setHeader('Access-Control-Allow-Methods', 'POST');
    res.setHeader('Access-Control-Allow-Headers', 'Content-Type');
    res.setHeader('Access-Control-Max-Age', '600');
    res.status(204).end();
    return;
  }
  next();
};

export function connectRouter(config: Readonly<ApiStubConfig>, deps: AppDeps, routing: RoutingDeps): Router {
  const router = Router();
  const connectBody = connectBodySchema(config.metadataLimitBytes);
  router.options(CONNECT_PATH, cors);
  router.post(CONNECT_PATH, cors, apiJsonBody(config), async (req, res) => {
    const body = parseBody(connectBody, req.body);
    const { workspaceId } = authenticatePublishable(deps.db, body.publishableKey);
    // The workspace's hourly and per-second caps cover connect like every API call (spec section 8).
    const rate = consumeRate(deps.db, workspaceId, config.rateCaps, deps.clock());
    if (!rate.allowed) throw rateLimitError(rate);
    const result = await connectSession(
      { db: deps.db, now: deps.clock, log: deps.log, config: config.routing, routing },
      { workspaceId, interviewId: body.interviewId, sessionId: body.sessionId },
    );
    res.setHeader('Cache-Control', 'no-store');
    res.status(200).json({ room_url: result.room_url, token: result.token, sessionId: result.sessionId, route: result.route });
  });
  return router;
}
