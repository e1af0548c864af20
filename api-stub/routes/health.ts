import { Router } from 'express';
import type { AppDeps } from '../deps.ts';
import { probeWrite, writeFailure } from '../db/write-health.ts';

/**
 * Liveness and readiness: ready when the database answers a read and can write. After a write failed
 * for lack of space or an I/O error, readiness tries a real write each time until one commits; that
 * write is twice the largest body (`probeBytes`), so that it does not fit where a request's would not.
 */
export function healthRouter(deps: AppDeps, options: { probeBytes: number }): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', (_req, res) => {
    try {
      deps.db.prepare('SELECT 1').get();
      if (writeFailure(deps.db) && !probeWrite(deps.db, options.probeBytes)) {
        const failure = writeFailure(deps.db);
        res.status(503).json({
          error: 'unavailable',
          message:
            `The database cannot write: ${failure?.reason ?? 'storage error'}. Free space on its disk (or fix the ` +
            `file); readiness returns once a write succeeds.`,
        });
        return;
      }
      res.json({ status: 'ready' });
    } catch {
      res.status(503).json({ error: 'unavailable', message: 'The database is not answering.' });
    }
  });
  return router;
}
