import { HttpError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/log.ts';
import { isoSeconds } from '../../lib/time.ts';
import type { Database } from '../db/database.ts';
import { SecretDecryptError } from '../crypto/envelope.ts';
import { OutboundError } from '../outbound/outbound-error.ts';
import type { RoutingConfig } from '../routing-config.ts';
import type { RoutingDeps } from '../routing-deps.ts';
import { getSelfHost, openToken } from '../self-host/settings-store.ts';
import { getDeployment } from '../store/deployments.ts';
import { getSession, isProvisional, markClicked, markConnected, nextConnectAttempt, type SessionRecord } from '../store/sessions.ts';
import { forgetReportToken, mintReportToken, storeReportToken } from '../store/report-tokens.ts';
import { enforceHostedShare, heldHostedTotal } from './hosted-share.ts';
import { callSpawn, PoolFullError, spawnFailure, type Route, type SpawnAnswer, type SpawnTarget } from './spawn-call.ts';

/**
 * `POST /api/v2/sdk/connect` after authentication (spec section 1, routing): check the session,
 * pick the substrate from the workspace's pipelineEndpoint, spawn within the budget (decryption
 * included), then record STARTED and the route used. Docs: docs/connect.md.
 */
export interface ConnectRequest {
  workspaceId: string;
  interviewId: string;
  sessionId: string;
}

export interface ConnectResult extends SpawnAnswer {
  sessionId: string;
  route: Route;
}

export interface ConnectContext {
  db: Database;
  now: () => number;
  log: Logger;
  config: Readonly<RoutingConfig>;
  routing: RoutingDeps;
}

/** The session, checked against the key's workspace and the interview, and still connectable. */
function connectableSession(ctx: ConnectContext, req: ConnectRequest): SessionRecord {
  const deployment = getDeployment(ctx.db, req.interviewId);
  if (!deployment) throw new HttpError('interview_not_found', `No interview ${JSON.stringify(req.interviewId)} exists.`);
  if (deployment.workspaceId !== req.workspaceId)
    throw new HttpError('cross_workspace', 'The interview belongs to another workspace than the publishable key.');
  const session = getSession(ctx.db, req.sessionId);
  if (!session) throw new HttpError('session_not_found', `No session ${JSON.stringify(req.sessionId)} exists.`);
  if (session.workspaceId !== req.workspaceId)
    throw new HttpError('cross_workspace', 'The session belongs to another workspace than the publishable key.');
  if (session.deploymentId !== req.interviewId)
    throw new HttpError('invalid_request', 'sessionId: the session belongs to another interview than interviewId.');
  if (session.status === 'COMPLETED')
    throw new HttpError('session_not_connectable', 'The session is already completed; create a new session to interview again.');
  if (session.status === 'EXPIRED' || session.expiresAt <= ctx.now())
    throw new HttpError('session_not_connectable', 'The session link has expired; create a new session.');
  return session;
}

async function targetFor(ctx: ConnectContext, workspaceId: string, signal: AbortSignal): Promise<SpawnTarget> {
  const selfHost = getSelfHost(ctx.db, workspaceId);
  if (!selfHost) {
    const { hostedPipelineUrl, hostedPipelineKey } = ctx.config;
    if (!hostedPipelineUrl || !hostedPipelineKey)
      throw new HttpError('unavailable', 'The hosted voice pipeline is not configured on this service (HOSTED_PIPELINE_URL).');
    return { route: 'hosted', url: hostedPipelineUrl, bearer: hostedPipelineKey };
  }
  if (!ctx.routing.keys)
    throw new HttpError('unavailable', 'The service cannot decrypt pipeline tokens (no key-encryption key is configured).');
  try {
    const token = await raceDeadline(openToken(selfHost, workspaceId, ctx.routing.keys), signal);
    return { route: 'self_hosted', url: selfHost.pipelineEndpoint, bearer: token };
  } catch (err) {
    if (err instanceof OutboundError) throw spawnFailure(err, 'self_hosted');
    if (err instanceof SecretDecryptError) {
      ctx.log.error('pipeline token cannot be decrypted', { workspaceId, reason: err.message });
      throw new HttpError(
        'unavailable',
        'The stored worker token cannot be decrypted. Set the endpoint and token again in Settings → Server → Self-host.',
      );
    }
    throw err;
  }
}

/** Decryption (a remote KMS in production) counts against the same budget as the call. */
async function raceDeadline<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) throw OutboundError.fromAbort(signal, 'decrypting the worker token');
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(OutboundError.fromAbort(signal, 'decrypting the worker token'));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

export async function connectSession(ctx: ConnectContext, req: ConnectRequest): Promise<ConnectResult> {
  const session = connectableSession(ctx, req);
  const release = ctx.routing.limiter.tryAcquire(req.workspaceId);
  if (!release) {
    throw new HttpError('rate_limit_exceeded', 'Too many voice sessions are starting at once in this workspace. Retry in a few seconds.', {
      'Retry-After': '2',
    });
  }
  try {
    // The budget starts before anything else: token decryption, DNS, TLS and the answer all count.
    const signal = AbortSignal.timeout(ctx.config.spawnTimeoutMs);
    // Connecting proves the respondent opened the page, even if that call was missed. A session this
    // connect created was opened by nobody yet: markConnected records the open once a bot takes it.
    if (session.clickedAt === null && !isProvisional(ctx.db, session.id)) markClicked(ctx.db, session.id, ctx.now());
    const target = await targetFor(ctx, req.workspaceId, signal);
    const deployment = getDeployment(ctx.db, req.interviewId)!;
    const started = performance.now();
    // After a reported failure this connect is the respondent retrying: a new attempt, which the
    // worker serves on a fresh bot and which may complete, or fail with its own interview.failed.
    const attempt = nextConnectAttempt(ctx.db, session.id);
    // The shared hosted capacity: one workspace may hold only its fair share of it at once.
    const share = {
      db: ctx.db,
      capacity: ctx.routing.hostedCapacity,
      configuredCap: ctx.config.hostedSessionsPerWorkspace,
      now: ctx.now(),
      since: ctx.now() - ctx.config.hostedSessionHoldSeconds * 1000,
    };
    if (target.route === 'hosted') enforceHostedShare(share, req.workspaceId, session.id);
    // Stored before the call (and with no await since the count above, so concurrent connects see it):
    // the worker may report (a failure, say) before its answer reaches us.
    const reportToken = mintReportToken();
    storeReportToken(ctx.db, { sessionId: session.id, attempt, route: target.route }, reportToken, ctx.now());
    let answer: SpawnAnswer;
    try {
      answer = await callSpawn(
        target,
        {
          sessionId: session.id,
          attempt,
          reportToken,
          interviewId: session.deploymentId,
          metadata: session.metadata,
          interview: deployment.interview,
          expiresAt: isoSeconds(session.expiresAt),
        },
        { signal, policy: ctx.routing.policy, log: ctx.log, ...(ctx.routing.ca ? { ca: ctx.routing.ca } : {}) },
      );
    } catch (err) {
      forgetReportToken(ctx.db, session.id, reportToken);
      if (target.route === 'hosted' && err instanceof PoolFullError)
        ctx.routing.hostedCapacity.noteRefused(heldHostedTotal(ctx.db, share.since), ctx.now());
      throw err;
    }
    if (target.route === 'hosted') ctx.routing.hostedCapacity.noteAccepted(() => heldHostedTotal(ctx.db, share.since));
    const moved = markConnected(ctx.db, session.id, { route: target.route, attempt }, ctx.now());
    if (moved.kind === 'refused') throw new HttpError('session_not_connectable', moved.reason);
    // A provisional session whose expiry came during the spawn was discarded by the sweeper.
    if (moved.kind === 'not_found')
      throw new HttpError('session_not_connectable', 'The session expired while connecting; create a new session.');
    ctx.log.info('session connected', {
      sessionId: session.id,
      workspaceId: req.workspaceId,
      route: target.route,
      spawnMs: Math.round(performance.now() - started),
    });
    return { ...answer, sessionId: session.id, route: target.route };
  } finally {
    release();
  }
}
