/**
 * The one catalogue of error codes, shared by the api-stub, the worker and the SDK.
 * Spec section 7 fixes the first nine; the rest are ours and documented in docs/errors.md.
 * Every non-2xx response of our servers is `{ error: <code>, message: <text> }`.
 */
export const ERROR_STATUS = {
  // Spec section 7.
  invalid_request: 400,
  invalid_key: 401,
  cross_workspace: 403,
  interview_not_found: 404,
  session_not_found: 404,
  interview_not_active: 409,
  interview_expired: 410,
  rate_limit_exceeded: 429,
  internal_error: 500,
  // Ours, where the spec leaves the status and code open.
  not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  unsupported_media_type: 415,
  invalid_token: 401,
  session_not_connectable: 409,
  worker_unreachable: 504,
  worker_error: 502,
  no_capacity: 503,
  unavailable: 503,
  outcome_conflict: 409,
  // Node's own parser refusals: the spec pairs invalid_request with 400 only.
  request_timeout: 408,
  headers_too_large: 431,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_STATUS, value);
}

/** The JSON body of every error response. */
export interface ErrorBody {
  error: string;
  message: string;
}

/**
 * A client-facing error: rendered as `{error, message}` with the catalogue's status.
 * Anything thrown that is not an HttpError is a fault of ours and becomes `internal_error`.
 */
export class HttpError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  /** Extra response headers, e.g. Retry-After on 429 and 503. */
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'HttpError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.headers = headers;
  }

  toBody(): ErrorBody {
    return { error: this.code, message: this.message };
  }
}
