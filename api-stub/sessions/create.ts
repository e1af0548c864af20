import type { Database } from '../db/database.ts';
import { inGroupCommit } from '../db/database.ts';
import { HttpError } from '../../lib/errors.ts';
import { hasIdForm, newId } from '../../lib/ids.ts';
import { isoSeconds } from '../../lib/time.ts';
import type { ApiStubConfig } from '../config.ts';
import { getDeploymentGate } from '../store/deployments.ts';
import { getSession, insertSession, type NewSession, type SessionRecord } from '../store/sessions.ts';
import { findIdempotencyKey, rememberIdempotencyKey, requestFingerprint } from '../store/idempotency.ts';
import { countCall, rateLimitError } from '../rate-limit/consume.ts';
import { authenticatePublishable } from '../auth.ts';
import { LINK_TOKEN_PARAM, linkTokenDigest, mintLinkToken } from '../store/link-tokens.ts';
import type { CreateSessionBody } from './schemas.ts';

export interface CreateContext {
  config: Pick<ApiStubConfig, 'sessionTtlSeconds' | 'publishableRateCaps' | 'idempotencyTtlSeconds'>;
  now: number;
  /** Respondent page base, without a trailing slash. */
  publicUrl: string;
  idempotencyKey: string | null;
  /** Connect creating its own session (the spec's body): provisional until a spawn succeeds. */
  provisional?: boolean;
}

export interface CreateOutcome {
  session: SessionRecord;
  /** True when an Idempotency-Key matched an earlier creation and that session is returned. */
  replayed: boolean;
  rateHeaders: Record<string, string>;
}

/**
 * Session creation, in the order that a client can act on: body (400), key (401), idempotent
 * replay, rate caps (429), deployment lookup (404), ownership (403), status (409), expiry (410).
 * Every authenticated call that reaches the rate caps counts against them. Everything up to the
 * group commit runs synchronously (async only so that every failure is a rejection).
 */
export async function createSession(db: Database, body: CreateSessionBody, ctx: CreateContext): Promise<CreateOutcome> {
  // Depth and size of metadata were bounded by the body's schema (sessions/schemas.ts).
  const metadata = body.metadata ?? {};
  const { workspaceId } = authenticatePublishable(db, body.publishableKey);

  const fingerprint = ctx.idempotencyKey === null ? null : requestFingerprint({ interviewId: body.interviewId, metadata });
  if (ctx.idempotencyKey !== null) {
    const earlier = findIdempotencyKey(db, workspaceId, ctx.idempotencyKey, ctx.now, ctx.config.idempotencyTtlSeconds * 1000);
    if (earlier) {
      if (earlier.requestHash !== fingerprint) {
        throw new HttpError('invalid_request', 'Idempotency-Key: already used with a different body. Use a new key for a new session.');
      }
      const session = getSession(db, earlier.sessionId);
      // Through the group commit: the first creation may be in this very turn's uncommitted
      // transaction, and a replay must not answer before it is on disk.
      if (session) return inGroupCommit(db, () => ({ session, replayed: true, rateHeaders: {} }), { savepoint: false });
    }
  }

  // One transaction counts the call and stores the session, joined with the other creations of
  // this event-loop turn (group commit). Refusals after the count are returned, not thrown, so
  // that the count is committed with them. The caller answers once the promise resolves.
  const result = inGroupCommit(db, (): HttpError | CreateOutcome => {
    // A publishable-key call: its own budget, apart from the secret-key calls (rate-limit/consume.ts).
    const rate = countCall(db, workspaceId, ctx.config.publishableRateCaps, ctx.now, 'publishable');
    if (!rate.allowed) return rateLimitError(rate, 'publishable');
    const deployment = hasIdForm(body.interviewId, 'dpl') ? getDeploymentGate(db, body.interviewId) : null;
    if (!deployment)
      return new HttpError('interview_not_found', `interviewId: no deployment ${JSON.stringify(body.interviewId.slice(0, 64))} exists.`);
    if (deployment.workspaceId !== workspaceId) {
      return new HttpError('cross_workspace', 'interviewId: the deployment belongs to another workspace than the publishable key.');
    }
    if (deployment.status !== 'ACTIVE') {
      return new HttpError(
        'interview_not_active',
        `The deployment is ${deployment.status}; activate it in the dashboard to take sessions.`,
      );
    }
    if (deployment.expiresAt !== null && deployment.expiresAt <= ctx.now) {
      return new HttpError('interview_expired', `The deployment expired at ${isoSeconds(deployment.expiresAt)}.`);
    }
    // Second precision, so that the stored instant is exactly the one the API shows.
    const ttlEnd = Math.floor((ctx.now + ctx.config.sessionTtlSeconds * 1000) / 1000) * 1000;
    const expiresAt = deployment.expiresAt === null ? ttlEnd : Math.min(ttlEnd, Math.floor(deployment.expiresAt / 1000) * 1000);
    const id = newId('inv');
    // The link carries its own capability in the fragment, so it works alone (docs/respondent-page.md).
    const linkToken = mintLinkToken();
    const url = `${ctx.publicUrl}/s/${id}?from=sdk#${LINK_TOKEN_PARAM}=${linkToken}`;
    const session: NewSession = { id, workspaceId, deploymentId: deployment.id, metadata, url, createdAt: ctx.now, expiresAt };
    insertSession(db, { ...session, provisional: ctx.provisional === true }, linkTokenDigest(linkToken));
    if (ctx.idempotencyKey !== null) {
      rememberIdempotencyKey(db, workspaceId, ctx.idempotencyKey, { requestHash: fingerprint!, sessionId: id, createdAt: ctx.now });
    }
    const record: SessionRecord = {
      ...session,
      status: 'PENDING',
      sentAt: null,
      clickedAt: null,
      startedAt: null,
      completedAt: null,
      expiredAt: null,
      response: null,
    };
    return { session: record, replayed: false, rateHeaders: rate.headers };
  });
  const outcome = await result;
  if (outcome instanceof HttpError) throw outcome;
  return outcome;
}
