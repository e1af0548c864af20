import { Router } from 'express';
import type { AppDeps } from '../deps.ts';

/** Liveness and readiness: ready when the database answers. */
export function healthRouter(deps: AppDeps): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', (_req, res) => {
    try {
      deps.db.prepare('SELECT 1').get();
      res.json({ status: 'ready' });
    } catch {
      res.status(503).json({ error: 'unavailable', message: 'The database is not answering.' });
    }
  });
  return router;
}
