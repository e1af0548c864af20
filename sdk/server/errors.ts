import { ERROR_STATUS, isErrorCode, type ErrorCode } from '../../lib/errors.ts';
import { ServiceError, type ServiceErrorInit } from '../shared/service-error.ts';

/**
 * The server SDK's errors. Every non-2xx answer of the API becomes a `ServiceError` (the one class
 * both SDKs throw, sdk/shared/service-error.ts) whose `status` and `code` are the HTTP status and the
 * body's `error` (spec section 7). One function, `errorFromResponse`, picks the subclass; each subclass
 * sets `name` so logs say which it is.
 */
export { ServiceError };

/** 400 invalid_request: a body field is missing or malformed. */
export class InvalidRequestError extends ServiceError {
  override readonly name = 'InvalidRequestError';
}
/** 401 invalid_key: the key is missing, unknown, or of the wrong kind for the call. */
export class AuthenticationError extends ServiceError {
  override readonly name = 'AuthenticationError';
}
/** 403 cross_workspace: the key and the resource belong to different workspaces. */
export class PermissionError extends ServiceError {
  override readonly name = 'PermissionError';
}
/** 404 interview_not_found / session_not_found. */
export class NotFoundError extends ServiceError {
  override readonly name = 'NotFoundError';
}
/** 409 interview_not_active: the deployment is DRAFT or PAUSED. */
export class ConflictError extends ServiceError {
  override readonly name = 'ConflictError';
}
/** 410 interview_expired: the deployment's expiresAt has passed. */
export class GoneError extends ServiceError {
  override readonly name = 'GoneError';
}
/** 429 rate_limit_exceeded: the hourly or the service cap of the workspace is hit. */
export class RateLimitError extends ServiceError {
  override readonly name = 'RateLimitError';
}
/** 5xx: a fault on the service side; retry with backoff. */
export class InternalServerError extends ServiceError {
  override readonly name = 'InternalServerError';
}
/** No HTTP answer at all (refused, reset, timed out). `status` is 0. */
export class ConnectionError extends ServiceError {
  override readonly name = 'ConnectionError';
}

type ErrorClass = new (init: ServiceErrorInit) => ServiceError;

const BY_STATUS: Record<number, ErrorClass> = {
  400: InvalidRequestError,
  401: AuthenticationError,
  403: PermissionError,
  404: NotFoundError,
  409: ConflictError,
  410: GoneError,
  429: RateLimitError,
};

/** Subclass for a code of the shared catalogue, else for the status. */
function classFor(status: number, code: string): ErrorClass {
  const catalogued: number | undefined = isErrorCode(code) ? ERROR_STATUS[code as ErrorCode] : undefined;
  const byStatus = BY_STATUS[catalogued ?? status];
  if (byStatus) return byStatus;
  if (status >= 500) return InternalServerError;
  return ServiceError;
}

/** Seconds from a Retry-After value (delta-seconds or an HTTP date), or null. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - now) / 1000));
}

/** Maps a non-2xx answer to its ServiceError. A body that is not our `{error, message}` still maps, by status. */
export function errorFromResponse(status: number, bodyText: string, headers: Headers): ServiceError {
  let raw: unknown = bodyText;
  let code = status >= 500 ? 'internal_error' : 'unknown_error';
  let message = `The service answered HTTP ${status}.`;
  let sessionId: string | null = null;
  try {
    raw = JSON.parse(bodyText);
    const body = raw as { error?: unknown; message?: unknown; sessionId?: unknown };
    if (typeof body.error === 'string') code = body.error;
    if (typeof body.message === 'string') message = body.message;
    if (typeof body.sessionId === 'string') sessionId = body.sessionId;
  } catch {
    // Not JSON (e.g. a proxy's HTML page): keep the defaults and the raw text.
  }
  const ErrorType = classFor(status, code);
  return new ErrorType({
    status,
    code,
    message,
    raw,
    sessionId,
    requestId: headers.get('request-id'),
    retryAfterSeconds: parseRetryAfter(headers.get('retry-after')),
  });
}
