import { HttpError } from '../../lib/errors.ts';
import { isRoomTransportName, ROOM_TRANSPORTS, type RoomTransportName } from '../../lib/room-transport.ts';
import { stringifyJson } from '../../lib/json-text.ts';
import type { Logger } from '../../lib/log.ts';
import type { EgressPolicy } from '../outbound/egress-guard.ts';
import { OutboundError } from '../outbound/outbound-error.ts';
import { postJson } from '../outbound/post-json.ts';
import type { InterviewDefinition } from '../store/deployments.ts';
import type { SessionRoute } from '../store/sessions.ts';

/**
 * The spawn request (docs/contracts.md) and its answer. The body carries the session, the interview
 * definition and metadata, never a provider key of the service. Every failure becomes an HttpError
 * whose message names neither the token nor the request headers.
 */
export interface SpawnBody {
  sessionId: string;
  /** 0 for the first connect; one more for each connect after a reported failure (a retry). */
  attempt: number;
  /** This spawn's report credential: the worker's outcome report bears it (docs/contracts.md, C1). */
  reportToken: string;
  interviewId: string;
  metadata: Record<string, unknown>;
  interview: InterviewDefinition;
  expiresAt: string;
}

export interface SpawnAnswer {
  room_url: string;
  token: string;
  /** The room's transport as the worker named it; absent from a worker before this field. */
  transport?: RoomTransportName;
}

/** The substrate a spawn goes to; the store records it on the session. */
export type Route = SessionRoute;

export const UNREACHABLE_MESSAGE = 'The voice worker is unreachable. Check the endpoint status in Settings → Server → Self-host.';
const HOSTED_UNREACHABLE_MESSAGE = 'The hosted voice pipeline is unreachable. Retry in a moment.';

/**
 * Maps an outbound failure to the client's error (504 unreachable, or 502 for a refused endpoint).
 * Connect is called with a publishable key, which anyone may hold: the answer never says what the
 * endpoint's name resolved to (the address the policy refused); callSpawn logs that instead.
 */
export function spawnFailure(err: OutboundError, route: Route): HttpError {
  switch (err.kind) {
    case 'timeout':
    case 'refused':
    case 'tls':
    case 'network':
    case 'dns':
      return new HttpError(
        'worker_unreachable',
        route === 'self_hosted' ? `${UNREACHABLE_MESSAGE} (${err.kind})` : HOSTED_UNREACHABLE_MESSAGE,
      );
    case 'egress_refused':
      return new HttpError(
        'worker_error',
        'The voice worker endpoint cannot be called: its host resolves to an address the service does not call ' +
          "(the reason is in the service's log). Check it in Settings → Server → Self-host.",
      );
    default:
      return new HttpError(
        'worker_error',
        `The voice worker endpoint cannot be called: ${err.message} Check it in Settings → Server → Self-host.`,
      );
  }
}

/**
 * A 503 whose body says `no_capacity`: the pool has no free warm slot (the worker's own answer), as
 * opposed to another 503 (a draining replica, an outage). The hosted share learns from this one only.
 */
export class PoolFullError extends HttpError {
  constructor(message: string, headers: Record<string, string>) {
    super('no_capacity', message, headers);
    this.name = 'PoolFullError';
  }
}

/** The `error` field of a JSON error body, or null. */
function errorCodeOf(body: string): string | null {
  try {
    const parsed = JSON.parse(body) as { error?: unknown } | null;
    return typeof parsed?.error === 'string' ? parsed.error : null;
  } catch {
    return null;
  }
}

export interface SpawnTarget {
  route: Route;
  url: string;
  bearer: string;
}

export async function callSpawn(
  target: SpawnTarget,
  body: SpawnBody,
  options: { signal: AbortSignal; policy: EgressPolicy; ca?: string[]; log?: Logger },
): Promise<SpawnAnswer> {
  let res;
  try {
    res = await postJson({
      url: target.url,
      body: stringifyJson(body),
      headers: { authorization: `Bearer ${target.bearer}` },
      signal: options.signal,
      httpsOnly: true,
      policy: options.policy,
      maxResponseBytes: 64 * 1024,
      ...(options.ca ? { ca: options.ca } : {}),
    });
  } catch (err) {
    if (err instanceof OutboundError) {
      // The whole cause (the address a name resolved to, say) is for the operator, not the client.
      options.log?.warn('spawn call failed', { sessionId: body.sessionId, route: target.route, failure: err.kind, reason: err.message });
      throw spawnFailure(err, target.route);
    }
    throw err;
  }
  const who = target.route === 'self_hosted' ? 'The voice worker' : 'The hosted voice pipeline';
  if (res.status === 503) {
    const retryAfter = String(res.headers['retry-after'] ?? '5');
    const message = `${who} has no free capacity right now. Retry after ${retryAfter} s.`;
    const headers = { 'Retry-After': /^\d{1,5}$/.test(retryAfter) ? retryAfter : '5' };
    throw errorCodeOf(res.body) === 'no_capacity' ? new PoolFullError(message, headers) : new HttpError('no_capacity', message, headers);
  }
  if (res.status === 401 || res.status === 403) {
    throw new HttpError(
      'worker_error',
      `${who} refused the service's credentials (${res.status}). Check that the token in Settings → Server → Self-host matches the worker's.`,
    );
  }
  if (res.status < 200 || res.status >= 300) throw new HttpError('worker_error', `${who} answered ${res.status} to the spawn call.`);
  let answer: unknown;
  try {
    answer = res.truncated ? null : JSON.parse(res.body);
  } catch {
    answer = null;
  }
  const a = answer as Partial<SpawnAnswer> | null;
  if (!a || typeof a.room_url !== 'string' || typeof a.token !== 'string' || !a.room_url || !a.token) {
    throw new HttpError('worker_error', `${who} answered without a valid {room_url, token} object.`);
  }
  if (a.transport !== undefined && !isRoomTransportName(a.transport)) {
    throw new HttpError(
      'worker_error',
      `${who} answered a transport the respondent's page cannot open (expected one of ${ROOM_TRANSPORTS.join(', ')}).`,
    );
  }
  return { room_url: a.room_url, token: a.token, ...(a.transport ? { transport: a.transport } : {}) };
}
