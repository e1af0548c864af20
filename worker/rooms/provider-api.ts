import { z } from 'zod';

/**
 * One JSON call to a room provider's server API (Daily's REST API, LiveKit's Twirp API): bearer
 * auth, a JSON body, a deadline. A 2xx answers the parsed body; anything else throws a
 * RoomProviderApiError that keeps the status and the provider's own error code, and whose message
 * names the call but never the credentials. A 2xx answer is checked before anyone reads it: a
 * JSON object (or an empty body), within MAX_ANSWER_BYTES, and of the call's `answer` schema when
 * it names one; otherwise the call fails with status 502 and code `invalid_answer`.
 */
export class RoomProviderApiError extends Error {
  readonly status: number;
  readonly code: string;

  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = 'RoomProviderApiError';
    this.status = status;
    this.code = code;
  }
}

export interface ProviderCall {
  method: string;
  url: string;
  bearer: string;
  body?: unknown;
  timeoutMs: number;
  /** Names the call in error messages, e.g. `LiveKit server API CreateRoom`. */
  describe: string;
  /** Where this provider puts its error code and text in an error body. */
  readError: (json: Record<string, unknown>) => { code?: unknown; detail?: unknown };
  /** The provider's own subclass, so callers can tell whose API failed. */
  makeError?: (status: number, code: string, message: string) => RoomProviderApiError;
  /** The shape of a 2xx answer (the fields the caller reads); without it, any JSON object passes. */
  answer?: z.ZodType;
}

/** No room API answer we read comes near this; a larger one is refused, not buffered. */
export const MAX_ANSWER_BYTES = 1024 * 1024;
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

async function readBounded(res: Response): Promise<string | null> {
  if (Number(res.headers.get('content-length') ?? 0) > MAX_ANSWER_BYTES) {
    await res.body?.cancel();
    return null;
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body ?? []) {
    size += (chunk as Uint8Array).byteLength;
    if (size > MAX_ANSWER_BYTES) return null;
    chunks.push(chunk as Uint8Array);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export async function callProviderApi<T>(call: ProviderCall): Promise<T> {
  const res = await fetch(call.url, {
    method: call.method,
    headers: { authorization: `Bearer ${call.bearer}`, 'content-type': 'application/json' },
    body: call.body === undefined ? undefined : JSON.stringify(call.body),
    signal: AbortSignal.timeout(call.timeoutMs),
  });
  const fail = (status: number, code: string, message: string) =>
    call.makeError ? call.makeError(status, code, message) : new RoomProviderApiError(status, code, message);
  const text = await readBounded(res);
  if (text === null)
    throw fail(502, 'invalid_answer', `${call.describe} failed: the answer (HTTP ${res.status}) is larger than ${MAX_ANSWER_BYTES} bytes`);
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : {};
  } catch {
    parsed = undefined; // a non-JSON answer (a proxy's error page) still gets a status-based error below
  }
  const json: Record<string, unknown> = isObject(parsed) ? parsed : {};
  if (!res.ok) {
    const { code, detail } = call.readError(json);
    const codeText = typeof code === 'string' ? code : `http-${res.status}`;
    const detailText = typeof detail === 'string' ? detail : res.statusText;
    const message = `${call.describe} failed: ${res.status} ${codeText}: ${detailText}`;
    throw fail(res.status, codeText, message);
  }
  if (!isObject(parsed)) throw fail(502, 'invalid_answer', `${call.describe} failed: the answer (HTTP ${res.status}) is not a JSON object`);
  if (call.answer) {
    const checked = call.answer.safeParse(json);
    if (!checked.success) {
      const issue = checked.error.issues[0];
      throw fail(
        502,
        'invalid_answer',
        `${call.describe} failed: the answer (HTTP ${res.status}) is malformed (${issue ? `${issue.path.join('.') || 'answer'}: ${issue.code}` : 'invalid'})`,
      );
    }
    return checked.data as T;
  }
  return json as T;
}
