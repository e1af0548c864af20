import { Router, type Request, type RequestHandler } from 'express';
import { HttpError } from '../../lib/errors.ts';
import { hasIdForm, newId } from '../../lib/ids.ts';
import type { ApiStubConfig } from '../config.ts';
import type { AppDeps } from '../deps.ts';
import { authenticateSecret } from '../auth.ts';
import { countRead, rateLimitError } from '../rate-limit/consume.ts';
import { createSession } from '../sessions/create.ts';
import { createSessionBodySchema, IDEMPOTENCY_KEY } from '../sessions/schemas.ts';
import { createdView, retrievedView } from '../sessions/view.ts';
import { getSession } from '../store/sessions.ts';
import { createSentMarker } from '../sessions/sent-marker.ts';
import { apiJsonBody, parseBody } from '../validation.ts';
import { browserCors } from './browser-cors.ts';

export const SESSIONS_PATH = '/api/v2/sdk/sessions';

/** The `Idempotency-Key` header (session creation, and connect with the spec's body). */
export function idempotencyKeyOf(req: Request): string | null {
  const value = req.get('Idempotency-Key');
  if (value === undefined) return null;
  if (!IDEMPOTENCY_KEY.test(value)) throw new HttpError('invalid_request', 'Idempotency-Key: expected 1 to 255 visible ASCII characters.');
  return value;
}

/** Base of the sessionUrl: PUBLIC_URL, or this server's loopback address and the port the request came in on. */
export function publicUrlOf(config: Pick<ApiStubConfig, 'publicUrl'>, req: Request): string {
  return config.publicUrl ?? `http://127.0.0.1:${req.socket.localPort}`;
}

const methodNotAllowed =
  (allowed: string, hint = ''): RequestHandler =>
  (req, res, next) => {
    res.setHeader('Allow', allowed);
    next(new HttpError('method_not_allowed', `${req.method} is not allowed here; use ${allowed}.${hint}`));
  };

/** Every answer of the session endpoints names its request, for support and for the SDK's `requestId`. */
const requestId: RequestHandler = (_req, res, next) => {
  res.setHeader('Request-Id', newId('req'));
  next();
};

export function sessionsRouter(config: Readonly<ApiStubConfig>, deps: AppDeps): Router {
  const router = Router();
  router.use(SESSIONS_PATH, requestId);
  const json = apiJsonBody(config);
  const createSessionBody = createSessionBodySchema(config.metadataLimitBytes);
  const sent = createSentMarker(deps.db, deps.clock, deps.log);

  router.options(SESSIONS_PATH, browserCors);
  router.post(SESSIONS_PATH, browserCors, json, async (req, res) => {
    const body = parseBody(createSessionBody, req.body);
    const idempotencyKey = idempotencyKeyOf(req);
    const now = deps.clock();
    const outcome = await createSession(deps.db, body, { config, now, publicUrl: publicUrlOf(config, req), idempotencyKey });
    const sessionId = outcome.session.id;
    // SENT once the 201 carrying the link has been handed to the client's connection.
    res.on('finish', () => sent.mark(sessionId));
    for (const [k, v] of Object.entries(outcome.rateHeaders)) res.setHeader(k, v);
    if (outcome.replayed) res.setHeader('Idempotent-Replayed', 'true');
    res.status(201).json(createdView(outcome.session));
  });
  router.all(SESSIONS_PATH, browserCors, methodNotAllowed('POST'));

  // Retrieval is server-only: no CORS headers, and a preflight is refused.
  router.get(`${SESSIONS_PATH}/:sessionId`, async (req, res) => {
    const { workspaceId } = authenticateSecret(deps.db, req.get('Authorization'));
    // Counted through the group commit; a counter that cannot be written fails open (countRead).
    const rate = await countRead(deps.db, workspaceId, config.rateCaps, deps.clock());
    if (!rate.allowed) throw rateLimitError(rate);
    const sessionId = String(req.params.sessionId);
    const session = hasIdForm(sessionId, 'inv') ? getSession(deps.db, sessionId) : null;
    if (!session) throw new HttpError('session_not_found', `No session ${JSON.stringify(sessionId.slice(0, 64))} exists.`);
    if (session.workspaceId !== workspaceId)
      throw new HttpError('cross_workspace', 'The session belongs to another workspace than the secret key.');
    for (const [k, v] of Object.entries(rate.headers)) res.setHeader(k, v);
    res.setHeader('Cache-Control', 'no-store');
    res.status(200).json(retrievedView(session));
  });
  router.all(`${SESSIONS_PATH}/:sessionId`, methodNotAllowed('GET', ' Session retrieval has no CORS: call it from your server.'));
  return router;
}
