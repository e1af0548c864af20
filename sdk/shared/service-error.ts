/**
 * The one error both SDKs throw for a non-2xx answer of the service: `status` and `code` are the
 * HTTP status and the body's `error` (spec section 7), `message` the body's `message`. The server
 * SDK subclasses it by status (sdk/server/errors.ts); the browser SDK throws it as is. It imports
 * nothing, so the browser bundle (api-stub/respondent/assets.ts) carries only this class.
 */
export interface ServiceErrorInit {
  status: number;
  code: string;
  message: string;
  requestId?: string | null;
  /** The parsed error body, or the raw text when it was not JSON. */
  raw?: unknown;
  /** Seconds from a Retry-After header, when the server sent one. */
  retryAfterSeconds?: number | null;
  /** The session a failed connect created (docs/errors.md): connect again with it to reach that session. */
  sessionId?: string | null;
}

export class ServiceError extends Error {
  readonly status: number;
  readonly code: string;
  readonly requestId: string | null;
  readonly raw: unknown;
  readonly retryAfterSeconds: number | null;
  readonly sessionId: string | null;

  constructor(init: ServiceErrorInit) {
    super(init.message);
    this.name = 'ServiceError';
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId ?? null;
    this.raw = init.raw;
    this.retryAfterSeconds = init.retryAfterSeconds ?? null;
    this.sessionId = init.sessionId ?? null;
  }
}
