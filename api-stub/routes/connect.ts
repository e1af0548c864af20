import { Router } from 'express';
import { z } from 'zod';
import { hasIdForm } from '../../lib/ids.ts';
import { HttpError } from '../../lib/errors.ts';
import { sessionForLinkToken } from '../store/link-tokens.ts';
import { authenticatePublishable } from '../auth.ts';
import { consumeRate, rateLimitError } from '../rate-limit/consume.ts';
import type { ApiStubConfig } from '../config.ts';
import { connectSession } from '../connect/connect.ts';
import type { AppDeps } from '../deps.ts';
import type { RoutingDeps } from '../routing-deps.ts';
import { createSessionBodySchema } from '../sessions/schemas.ts';
import { createSession } from '../sessions/create.ts';
import { idempotencyKeyOf, publicUrlOf } from './sessions.ts';
import { SessionNamedError } from '../connect/session-named-error.ts';
import { apiJsonBody, parseBody } from '../validation.ts';
import { browserCors } from './browser-cors.ts';

export const CONNECT_PATH = '/api/v2/sdk/connect';

/**
 * The connect body (docs/connect.md): the spec's `{interviewId, publishableKey, metadata}`, plus an
 * optional `sessionId`. Without it, connect creates the session first, with the creation body's
 * rules (the same schema for `interviewId` and `metadata`); with it, `interviewId` must be a dpl_ id.
 */
export function connectBodySchema(metadataLimitBytes: number) {
  const creation = createSessionBodySchema(metadataLimitBytes).shape;
  return z
    .strictObject({
      publishableKey: creation.publishableKey,
      interviewId: creation.interviewId,
      sessionId: z
        .string({ error: 'expected an inv_<id> session id' })
        .refine((v) => hasIdForm(v, 'inv'), { message: 'expected an inv_<id> session id' })
        .optional(),
      // The capability from sessionUrl's fragment (`#k=`): connects that session without a publishable key.
      sessionToken: z.string({ error: 'expected a string' }).min(1).max(256).optional(),
      metadata: creation.metadata,
    })
    .superRefine((body, ctx) => {
      if (body.sessionId !== undefined && !hasIdForm(body.interviewId, 'dpl'))
        ctx.addIssue({ code: 'custom', path: ['interviewId'], message: 'expected a dpl_<id> deployment id' });
      if (body.sessionToken !== undefined && body.sessionId === undefined)
        ctx.addIssue({ code: 'custom', path: ['sessionId'], message: 'required with sessionToken' });
    });
}

export function connectRouter(config: Readonly<ApiStubConfig>, deps: AppDeps, routing: RoutingDeps): Router {
  const router = Router();
  const connectBody = connectBodySchema(config.metadataLimitBytes);
  // The respondent page and the browser SDK call this from browsers.
  router.options(CONNECT_PATH, browserCors);
  router.post(CONNECT_PATH, browserCors, apiJsonBody(config), async (req, res) => {
    const body = parseBody(connectBody, req.body);
    let sessionId = body.sessionId;
    let workspaceId: string;
    let createdHere = false;
    if (sessionId !== undefined && body.sessionToken !== undefined) {
      // The link's own capability stands in for the publishable key, for this one session only. An
      // unknown session and a wrong token get the same answer.
      const owner = sessionForLinkToken(deps.db, sessionId, body.sessionToken);
      if (!owner)
        throw new HttpError('invalid_token', 'The interview link is not valid for this session. Open the link you were given again.');
      workspaceId = owner.workspaceId;
      const rate = consumeRate(deps.db, workspaceId, config.publishableRateCaps, deps.clock(), 'publishable');
      if (!rate.allowed) throw rateLimitError(rate, 'publishable');
    } else if (sessionId === undefined) {
      // The spec's body: create the session (same checks, errors and rate count as
      // POST /api/v2/sdk/sessions, metadata stored), then connect it; one call, counted once. The
      // session is provisional until a spawn succeeds; an Idempotency-Key binds retries to it.
      const created = await createSession(deps.db, body, {
        config,
        now: deps.clock(),
        publicUrl: publicUrlOf(config, req),
        idempotencyKey: idempotencyKeyOf(req),
        provisional: true,
      });
      sessionId = created.session.id;
      workspaceId = created.session.workspaceId;
      createdHere = true;
      if (created.replayed) {
        // A replay creates nothing but is still a connect call: counted like one with sessionId.
        const rate = consumeRate(deps.db, workspaceId, config.publishableRateCaps, deps.clock(), 'publishable');
        if (!rate.allowed) throw new SessionNamedError(rateLimitError(rate, 'publishable'), sessionId);
      }
    } else {
      workspaceId = authenticatePublishable(deps.db, body.publishableKey).workspaceId;
      // The workspace's hourly and per-second caps cover connect like every API call (spec section 8).
      const rate = consumeRate(deps.db, workspaceId, config.publishableRateCaps, deps.clock(), 'publishable');
      if (!rate.allowed) throw rateLimitError(rate, 'publishable');
    }
    const connectedSessionId = sessionId;
    const result = await connectSession(
      { db: deps.db, now: deps.clock, log: deps.log, config: config.routing, routing },
      { workspaceId, interviewId: body.interviewId, sessionId },
    ).catch((err: unknown) => {
      // The client has no other way to learn the id of the session this call created.
      throw createdHere && err instanceof HttpError ? new SessionNamedError(err, connectedSessionId) : err;
    });
    res.setHeader('Cache-Control', 'no-store');
    res.status(200).json({
      room_url: result.room_url,
      token: result.token,
      ...(result.transport ? { transport: result.transport } : {}),
      sessionId: result.sessionId,
      route: result.route,
    });
  });
  return router;
}
