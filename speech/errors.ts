/**
 * Errors of the speech server, in the shape of the OpenAI-compatible API it serves
 * (`{error: {message, type, param, code}}`), so that the bot's provider code, the `openai`
 * package and its retry policy read them as they read any provider's: 4xx for the client's
 * mistakes, 503 with Retry-After past capacity (retryable), 500 only for our own faults.
 */
export type SpeechErrorType = 'invalid_request_error' | 'server_error';

export class SpeechError extends Error {
  readonly status: number;
  readonly type: SpeechErrorType;
  readonly code: string;
  readonly param: string | null;
  readonly headers: Readonly<Record<string, string>>;

  constructor(status: number, code: string, message: string, options: { param?: string; headers?: Record<string, string> } = {}) {
    super(message);
    this.name = 'SpeechError';
    this.status = status;
    this.type = status >= 500 ? 'server_error' : 'invalid_request_error';
    this.code = code;
    this.param = options.param ?? null;
    this.headers = options.headers ?? {};
  }

  toBody(): { error: { message: string; type: SpeechErrorType; param: string | null; code: string } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/** Seconds a client is told to wait when a queue is full: about one decode. */
export const RETRY_AFTER_SECONDS = 1;

export const overloaded = (what: string): SpeechError =>
  new SpeechError(503, 'server_overloaded', `The speech server's ${what} queue is full; retry after ${RETRY_AFTER_SECONDS} s.`, {
    headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
  });

export const internalError = (): SpeechError =>
  new SpeechError(500, 'internal_error', 'The speech server failed on this request. Retry with exponential backoff.');
