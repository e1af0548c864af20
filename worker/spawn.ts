import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { HttpError } from '../lib/errors.ts';
import type { Logger } from '../lib/log.ts';
import { isoSeconds } from '../lib/time.ts';
import type { RedisPool } from './pool.ts';
import type { RoomProvider } from './rooms/provider.ts';
import { describeProblem, SpawnRequest, storedSpawnJson } from './spawn-request.ts';
import type { WorkerMetrics } from './telemetry/metrics.ts';
import {
  ATTR_INTERVIEW_ID,
  ATTR_POD,
  ATTR_ROOM_PROVIDER,
  ATTR_SESSION_ID,
  ATTR_SLOT_ID,
  ATTR_SPAWN_OUTCOME,
  SPAN_SESSION_START,
} from './telemetry/names.ts';
import { failSpan, tracer } from './telemetry/tracing.ts';

/**
 * POST / : the service asks for a bot. Hot path: check the token, validate, claim a warm slot in
 * one Redis script (idempotent per sessionId), mint the respondent's token locally, answer.
 * No provider round trip happens here; the `session.start` span covers exactly this handler.
 */
export interface SpawnDeps {
  pod: string;
  workerToken: string;
  pool: RedisPool;
  rooms: RoomProvider;
  metrics: WorkerMetrics;
  log: Logger;
  accepting: () => boolean;
  retryAfterSeconds: number;
  recordTtlSeconds: number;
  joinTimeoutSeconds: number;
  maxSessionSeconds: number;
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Constant-time bearer check: both sides are hashed first so lengths never leak either. */
export function bearerAuth(expected: string, onReject?: () => void): RequestHandler {
  const want = digest(expected);
  return (req, _res, next) => {
    const header = req.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    const ok = match !== null && timingSafeEqual(digest(match[1]!), want);
    if (!ok) onReject?.();
    if (!ok)
      return next(
        new HttpError('invalid_token', header ? 'The bearer token is not the worker token.' : 'Send Authorization: Bearer <worker token>.'),
      );
    next();
  };
}

export function spawnHandler(deps: SpawnDeps): RequestHandler {
  return async (req, res, next) => {
    const started = performance.now();
    const span = tracer().startSpan(SPAN_SESSION_START, { attributes: { [ATTR_POD]: deps.pod, [ATTR_ROOM_PROVIDER]: deps.rooms.name } });
    const done = (outcome: string) => {
      deps.metrics.spawns.inc({ outcome });
      deps.metrics.spawnDuration.observe({ outcome }, (performance.now() - started) / 1000);
      span.setAttribute(ATTR_SPAWN_OUTCOME, outcome);
      span.end();
    };
    const retry = { 'Retry-After': String(deps.retryAfterSeconds) };
    try {
      const parsed = SpawnRequest.safeParse(req.body);
      if (!parsed.success) throw Object.assign(new HttpError('invalid_request', describeProblem(parsed.error)), { outcome: 'bad_request' });
      const body = parsed.data;
      span.setAttributes({ [ATTR_SESSION_ID]: body.sessionId, [ATTR_INTERVIEW_ID]: body.interviewId });
      if (!deps.accepting())
        throw Object.assign(
          new HttpError('unavailable', 'This worker is not taking new sessions (draining or not ready). Retry on another replica.', retry),
          { outcome: 'unavailable' },
        );

      let claim;
      try {
        const spanContext = span.spanContext();
        claim = await deps.pool.claim({
          sessionId: body.sessionId,
          interviewId: body.interviewId,
          spawnJson: storedSpawnJson(body),
          nowSeconds: Math.floor(Date.now() / 1000),
          recordTtlSeconds: deps.recordTtlSeconds,
          minRoomSeconds: deps.joinTimeoutSeconds + deps.maxSessionSeconds,
          traceId: spanContext.traceId,
          spanId: spanContext.spanId,
        });
      } catch (err) {
        deps.log.warn('spawn could not reach Redis', { sessionId: body.sessionId, err });
        throw Object.assign(new HttpError('unavailable', 'The worker cannot reach its session store right now. Retry shortly.', retry), {
          outcome: 'unavailable',
        });
      }
      if (claim.kind === 'none') {
        throw Object.assign(
          new HttpError('no_capacity', 'No warm voice bot is free on any replica. Retry after the Retry-After delay.', retry),
          { outcome: 'no_capacity' },
        );
      }
      span.setAttribute(ATTR_SLOT_ID, claim.slot);
      const room = { name: claim.roomName, url: claim.roomUrl, exp: claim.roomExp };
      const expiresAt = claim.claimedAt + deps.joinTimeoutSeconds + deps.maxSessionSeconds;
      // Deterministic: the claim time comes from the record, so a repeated spawn gets the same token.
      const token = deps.rooms.mintToken({ room, role: 'respondent', sessionId: body.sessionId, issuedAt: claim.claimedAt, expiresAt });
      res.status(200).json({
        room_url: room.url,
        token,
        transport: deps.rooms.name,
        sessionId: body.sessionId,
        expiresAt: isoSeconds(expiresAt * 1000),
      });
      done(claim.kind === 'claimed' ? 'ok' : 'existing');
    } catch (err) {
      const outcome = (err as { outcome?: string }).outcome ?? 'error';
      if (err instanceof HttpError) failSpan(span, err.code);
      done(outcome);
      next(err);
    }
  };
}
