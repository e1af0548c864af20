import type { PageConfig } from './config.ts';
import type { RoomError } from './room.ts';

/** The connect call (docs/contracts.md): the service routes the spawn and answers a room. */
export interface ConnectAnswer {
  room_url: string;
  token: string;
  /** The room's transport; absent when the worker is older than the field (room.ts then guesses). */
  transport?: string;
  sessionId: string;
  route: string;
}

// Codes after which pressing Retry can help; others describe a session that cannot start any more.
const RETRYABLE = new Set([
  'worker_unreachable',
  'worker_error',
  'no_capacity',
  'unavailable',
  'rate_limit_exceeded',
  'internal_error',
  'network_error',
]);

export async function connect(config: PageConfig): Promise<ConnectAnswer | RoomError> {
  let res: Response;
  try {
    res = await fetch(`${config.apiBase}/api/v2/sdk/connect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      // The link's own capability when it has one; the SDK's publishable key otherwise (older links).
      body: JSON.stringify({
        ...(config.sessionToken ? { sessionToken: config.sessionToken } : { publishableKey: config.publishableKey ?? '' }),
        interviewId: config.interviewId,
        sessionId: config.sessionId,
        metadata: {},
      }),
    });
  } catch {
    return {
      code: 'network_error',
      message: 'Could not reach the interview service. Check your connection and try again.',
      retryable: true,
    };
  }
  const body = (await res.json().catch(() => null)) as Record<string, unknown> | null;
  if (!res.ok || !body || typeof body.room_url !== 'string' || typeof body.token !== 'string') {
    const code = typeof body?.error === 'string' ? body.error : 'internal_error';
    const message = typeof body?.message === 'string' ? body.message : `The interview service answered ${res.status}.`;
    return { code, message, retryable: RETRYABLE.has(code) };
  }
  return {
    room_url: body.room_url,
    token: body.token,
    ...(typeof body.transport === 'string' ? { transport: body.transport } : {}),
    sessionId: String(body.sessionId),
    route: String(body.route),
  };
}

export function isRoomError(value: ConnectAnswer | RoomError): value is RoomError {
  return 'code' in value;
}
