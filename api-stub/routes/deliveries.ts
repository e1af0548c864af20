import { Router } from 'express';
import { HttpError } from '../../lib/errors.ts';
import { hasIdForm } from '../../lib/ids.ts';
import { authenticateSecret } from '../auth.ts';
import type { ApiStubConfig } from '../config.ts';
import { countRead, rateLimitError } from '../rate-limit/consume.ts';
import type { AppDeps } from '../deps.ts';
import { decodeCursor, listDeliveries } from '../webhooks/delivery-log.ts';

export const DELIVERIES_PATH = '/api/v2/workspace/webhook-deliveries';

/**
 * The webhook delivery log of the key's workspace: `?limit=1..100` (default 20), `?cursor=` from
 * the previous page's nextCursor, optional `?eventId=evt_...`. Newest first. Secret key only.
 */
export function deliveriesRouter(config: Readonly<ApiStubConfig>, deps: AppDeps): Router {
  const router = Router();
  router.get(DELIVERIES_PATH, async (req, res) => {
    const { workspaceId } = authenticateSecret(deps.db, req.get('Authorization'));
    const rate = await countRead(deps.db, workspaceId, config.rateCaps, deps.clock());
    if (!rate.allowed) throw rateLimitError(rate);
    const q = req.query as Record<string, unknown>;
    const one = (name: string): string | null => {
      const v = q[name];
      if (v === undefined) return null;
      if (typeof v !== 'string') throw new HttpError('invalid_request', `${name}: give it once, as a plain value.`);
      return v;
    };
    const rawLimit = one('limit');
    const limit = rawLimit === null ? 20 : Number(rawLimit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100 || !/^\d+$/.test(rawLimit ?? '20')) {
      throw new HttpError('invalid_request', 'limit: expected an integer from 1 to 100.');
    }
    const cursor = one('cursor');
    const beforeSeq = cursor === null ? null : decodeCursor(cursor);
    if (cursor !== null && beforeSeq === null)
      throw new HttpError('invalid_request', 'cursor: not a cursor from this endpoint; pass nextCursor unchanged.');
    const eventId = one('eventId');
    if (eventId !== null && !hasIdForm(eventId, 'evt')) throw new HttpError('invalid_request', 'eventId: expected an evt_<id> event id.');
    res.setHeader('Cache-Control', 'no-store');
    res.status(200).json(listDeliveries(deps.db, workspaceId, { limit, beforeSeq, eventId }));
  });
  return router;
}
