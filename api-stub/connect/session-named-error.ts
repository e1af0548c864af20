import { HttpError, type ErrorBody } from '../../lib/errors.ts';

/**
 * A connect that created its session and then failed (the spawn refused, unreachable, or over a
 * cap) answers the same error with the session's id added: `{error, message, sessionId}`. The
 * client's retry sends that `sessionId` and reaches the same session instead of creating another
 * (docs/connect.md, "When a connect fails").
 */
export class SessionNamedError extends HttpError {
  readonly sessionId: string;

  constructor(cause: HttpError, sessionId: string) {
    super(cause.code, cause.message, { ...cause.headers });
    this.sessionId = sessionId;
  }

  override toBody(): ErrorBody & { sessionId: string } {
    return { ...super.toBody(), sessionId: this.sessionId };
  }
}
