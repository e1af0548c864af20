import { Router } from 'express';
import { z } from 'zod';
import { HttpError } from '../../lib/errors.ts';
import { isFailureReason } from '../../lib/failure-reasons.ts';
import type { ApiStubConfig } from '../config.ts';
import type { AppDeps } from '../deps.ts';
import type { RoutingDeps } from '../routing-deps.ts';
import { applyOutcome } from '../sessions/outcome.ts';
import { isReportTokenFor } from '../store/report-tokens.ts';
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
    // A code of lib/failure-reasons.ts such as llm_timeout; anything up to 200 characters is kept rather than refused.
    reason: z.string().min(1).max(200),
    message: z
      .string()
      .transform((m) => m.slice(0, 2000))
      .optional(),
  }),
]);

const refused = () =>
  new HttpError(
    'invalid_token',
    "The bearer token is not a report token the service issued for this session (the spawn body's reportToken).",
  );

export function workerOutcomeRouter(config: Readonly<ApiStubConfig>, deps: AppDeps, routing: RoutingDeps): Router {
  const router = Router();
  router.post(OUTCOME_PATH, apiJsonBody(config), async (req, res) => {
    const match = /^Bearer[ ]+(\S+)\s*$/i.exec(req.get('Authorization') ?? '');
    if (!match) throw new HttpError('invalid_token', "Send Authorization: Bearer <the reportToken of this session's spawn call>.");
    // The bearer is checked before anything says whether the session exists: an unknown session and
    // a wrong token get the same 401. The workspace's current pipeline token plays no part (C1).
    const sessionId = String(req.params.sessionId);
    if (!isReportTokenFor(deps.db, sessionId, match[1]!)) throw refused();
    const report = parseBody(outcomeBody, req.body);
    // Refusing would lose the outcome (the worker drops a 4xx report): a reason outside the catalogue
    // (a worker newer than this service) is kept and passed on, and said here (docs/webhooks.md).
    if (report.status === 'failed' && !isFailureReason(report.reason))
      deps.log.warn('reported failure reason is not in the catalogue', { sessionId, reason: report.reason.slice(0, 64) });
    const result = applyOutcome(deps.db, sessionId, report, deps.clock());
    if (result.applied) {
      routing.wakeOutbox();
      deps.log.info('session outcome recorded', { sessionId, outcome: report.status });
    }
    res.status(200).json({ sessionId, status: result.session.status });
  });
  return router;
}
