import express, { type ErrorRequestHandler, type Express } from 'express';
import { noteWriteError } from './db/write-health.ts';
import { errorHandler, notFound } from '../lib/http.ts';
import { keepNegativeZero } from '../lib/json-text.ts';
import type { ApiStubConfig } from './config.ts';
import type { AppDeps } from './deps.ts';
import { healthRouter } from './routes/health.ts';
import { sessionsRouter } from './routes/sessions.ts';
import { respondentRouter } from './routes/respondent.ts';
import { connectRouter } from './routes/connect.ts';
import { selfHostRouter } from './routes/self-host.ts';
import { workerOutcomeRouter } from './routes/worker-outcome.ts';
import { deliveriesRouter } from './routes/deliveries.ts';
import { standaloneRoutingDeps } from './routing-deps.ts';
import { translateClientErrors } from './client-errors.ts';

/**
 * The api-stub as a function of its config and dependencies. Only main.ts listens; tests start
 * the returned app on port 0. Each router owns its paths and its body parser.
 */
export function createApp(config: Readonly<ApiStubConfig>, deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', false);
  // Answers write metadata's -0 as `-0`, as it was sent (lib/json-text.ts).
  app.set('json replacer', keepNegativeZero);

  // Twice the largest body: more than one request writes (its rows and their indexes).
  app.use(healthRouter(deps, { probeBytes: 2 * config.bodyLimitBytes }));
  app.use(sessionsRouter(config, deps));
  app.use(respondentRouter(deps));
  const routing = deps.routing ?? standaloneRoutingDeps(config.routing);
  app.use(connectRouter(config, deps, routing));
  app.use(selfHostRouter(config, deps, routing));
  app.use(workerOutcomeRouter(config, deps, routing));
  app.use(deliveriesRouter(config, deps));

  app.use(notFound);
  // A write that failed outside a transaction (a single statement) is remembered for readiness too.
  app.use(((err, _req, _res, next) => {
    noteWriteError(deps.db, err);
    next(err);
  }) as ErrorRequestHandler);
  app.use(translateClientErrors);
  app.use(errorHandler(deps.log));
  return app;
}
