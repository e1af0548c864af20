/**
 * One JSON call to a room provider's server API (Daily's REST API, LiveKit's Twirp API): bearer
 * auth, a JSON body, a deadline. A 2xx answers the parsed body; anything else throws a
 * RoomProviderApiError that keeps the status and the provider's own error code, and whose message
 * names the call but never the credentials.
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
}

export async function callProviderApi<T>(call: ProviderCall): Promise<T> {
  const res = await fetch(call.url, {
    method: call.method,
    headers: { authorization: `Bearer ${call.bearer}`, 'content-type': 'application/json' },
    body: call.body === undefined ? undefined : JSON.stringify(call.body),
    signal: AbortSignal.timeout(call.timeoutMs),
  });
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    // A non-JSON answer (a proxy's error page) still gets a status-based error below.
  }
  if (!res.ok) {
    const { code, detail } = call.readError(json);
    const codeText = typeof code === 'string' ? code : `http-${res.status}`;
    const detailText = typeof detail === 'string' ? detail : res.statusText;
    const message = `${call.describe} failed: ${res.status} ${codeText}: ${detailText}`;
    throw call.makeError ? call.makeError(res.status, codeText, message) : new RoomProviderApiError(res.status, codeText, message);
  }
  return json as T;
}
