import { createHash, timingSafeEqual } from 'node:crypto';
import { Router } from 'express';
import { z } from 'zod';
import { HttpError } from '../../lib/errors.ts';
import { hasIdForm } from '../../lib/ids.ts';
import type { ApiStubConfig } from '../config.ts';
import type { AppDeps } from '../deps.ts';
import type { RoutingDeps } from '../routing-deps.ts';
import { applyOutcome } from '../sessions/outcome.ts';
import { getSelfHost, openToken } from '../self-host/settings-store.ts';
import { stmt } from '../db/statements.ts';
import { apiJsonBody, parseBody } from '../validation.ts';

export const OUTCOME_PATH = '/api/v2/worker/sessions/:sessionId/outcome';

const outcomeBody = z.discriminatedUnion('status', [
  z.strictObject({
    status: z.literal('completed'),
    attempt: z.number().int().min(0).optional(),
    // The summary is bounded by the body limit only: a long summary must not lose a completed interview.
    response: z.strictObject({ transcriptKey: z.string().min(1).max(2048), summary: z.string() }),
  }),
  z.strictObject({
    status: z.literal('failed'),
    attempt: z.number().int().min(0).optional(),
    // A short machine-readable code such as llm_timeout; anything up to 200 characters is kept rather than refused.
    reason: z.string().min(1).max(200),
    message: z.string().transform((m) => m.slice(0, 2000)).optional(),
  }),
]);

function sameSecret(a: string, b: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(a), digest(b));
}

const refused = () => new HttpError('invalid_token', 'The bearer token is not the one the service sent with this session\'s spawn call.');

/** The bearer a report must carry: the token the spawn call carried (by the route the session used). */
async function expectedBearer(deps: AppDeps, config: Readonly<ApiStubConfig>, routing: RoutingDeps, sessionId: string): Promise<string | null> {
  const row = stmt(deps.db, 'SELECT workspace_id, route FROM sessions WHERE id = ?').get(sessionId);
  if (!row) throw new HttpError('session_not_found', `No session ${JSON.stringify(sessionId)} exists.`);
  if (row.route === 'hosted') return config.routing.hostedPipelineKey;
  if (row.route !== 'self_hosted') return null; // never spawned: no worker holds a token for it
  const workspaceId = String(row.workspace_id);
  const settings = getSelfHost(deps.db, workspaceId);
  if (!settings || !routing.keys) return null;
  try {
    return await openToken(settings, workspaceId, routing.keys);
  } catch (err) {
    deps.log.error('pipeline token cannot be decrypted for an outcome report', { sessionId, err });
    return null;
  }
}

export function workerOutcomeRouter(config: Readonly<ApiStubConfig>, deps: AppDeps, routing: RoutingDeps): Router {
  const router = Router();
  router.post(OUTCOME_PATH, apiJsonBody(config), async (req, res) => {
    const match = /^Bearer[ ]+(\S+)\s*$/i.exec(req.get('Authorization') ?? '');
    if (!match) throw new HttpError('invalid_token', 'Send Authorization: Bearer <the token the spawn call carried>.');
    const sessionId = String(req.params.sessionId);
    if (!hasIdForm(sessionId, 'inv')) throw new HttpError('session_not_found', 'No such session.');
    const expected = await expectedBearer(deps, config, routing, sessionId);
    if (expected === null || !sameSecret(match[1]!, expected)) throw refused();
    const report = parseBody(outcomeBody, req.body);
    const result = applyOutcome(deps.db, sessionId, report, deps.clock());
    if (result.applied) {
      routing.wakeOutbox();
      deps.log.info('session outcome recorded', { sessionId, outcome: report.status });
    }
    res.status(200).json({ sessionId, status: result.session.status });
  });
  return router;
}
