import { Router } from 'express';
import { HttpError } from '../../lib/errors.ts';
import { authenticateSecret } from '../auth.ts';
import { consumeRate, rateLimitError } from '../rate-limit/consume.ts';
import type { ApiStubConfig } from '../config.ts';
import type { AppDeps } from '../deps.ts';
import type { RoutingDeps } from '../routing-deps.ts';
import { clearSelfHost, getSelfHost, putSelfHost } from '../self-host/settings-store.ts';
import { selfHostBody } from '../self-host/validate.ts';
import { apiJsonBody, parseBody } from '../validation.ts';

export const SELF_HOST_PATH = '/api/v2/workspace/self-host';

/**
 * Settings → Server → Self-host as an API, authenticated with the workspace's secret key. GET never
 * returns the token, only whether one is set. Server-only: no CORS.
 */
export function selfHostRouter(config: Readonly<ApiStubConfig>, deps: AppDeps, routing: RoutingDeps): Router {
  const router = Router();
  const authenticate = (authorization: string | undefined): { workspaceId: string } => {
    const { workspaceId } = authenticateSecret(deps.db, authorization);
    const rate = consumeRate(deps.db, workspaceId, config.rateCaps, deps.clock());
    if (!rate.allowed) throw rateLimitError(rate);
    return { workspaceId };
  };
  const view = (workspaceId: string) => {
    const settings = getSelfHost(deps.db, workspaceId);
    return { pipelineEndpoint: settings?.pipelineEndpoint ?? null, tokenSet: settings !== null };
  };
  router.get(SELF_HOST_PATH, (req, res) => {
    const { workspaceId } = authenticate(req.get('Authorization'));
    res.setHeader('Cache-Control', 'no-store');
    res.status(200).json(view(workspaceId));
  });
  router.put(SELF_HOST_PATH, apiJsonBody(config), async (req, res) => {
    const { workspaceId } = authenticate(req.get('Authorization'));
    const body = parseBody(selfHostBody, req.body);
    if (!routing.keys) {
      throw new HttpError('unavailable', 'This service has no key-encryption key (PIPELINE_KEK), so it cannot store a worker token.');
    }
    await putSelfHost(deps.db, routing.keys, workspaceId, body.pipelineEndpoint, body.pipelineToken, deps.clock());
    deps.log.info('self-host endpoint set', { workspaceId, pipelineEndpoint: body.pipelineEndpoint });
    res.status(200).json(view(workspaceId));
  });
  router.delete(SELF_HOST_PATH, (req, res) => {
    const { workspaceId } = authenticate(req.get('Authorization'));
    clearSelfHost(deps.db, workspaceId, deps.clock());
    deps.log.info('self-host endpoint cleared', { workspaceId });
    res.status(200).json(view(workspaceId));
  });
  router.all(SELF_HOST_PATH, (req, res, next) => {
    res.setHeader('Allow', 'GET, PUT, DELETE');
    next(new HttpError('method_not_allowed', `${req.method} is not allowed here; use GET, PUT or DELETE.`));
  });
  return router;
}
