import type { CreatedSession } from '../../lib/api-types.ts';
import { isRoomTransportName } from '../../lib/room-transport.ts';
import { ServiceError } from '../shared/service-error.ts';
import { mountSession, type MountOptions, type MountedSession } from './iframe.ts';

/**
 * The browser client: creates a session with a publishable key and mounts its respondent page.
 * It never sees a secret key; the publishable key is safe in a page (spec section 2, Keys).
 */
export interface ClientOptions {
  /** `pk_test_…` or `pk_live_…`. */
  publishableKey: string;
  /** The service's base address, e.g. `https://api.example.com`. Defaults to the origin this module was loaded from. */
  baseUrl?: string;
  /** For tests: another fetch. */
  fetch?: typeof fetch;
}

export interface CreateSessionInput {
  interviewId: string;
  metadata?: Record<string, unknown>;
}

/** `POST /api/v2/sdk/connect`: the spec's body; `sessionId` connects an existing session instead of creating one. */
export interface ConnectInput {
  interviewId: string;
  metadata?: Record<string, unknown>;
  sessionId?: string;
}

/** The room to join: `room_url` and `token`, for the session connect created or was given. */
export interface ConnectedRoom {
  sessionId: string;
  room_url: string;
  token: string;
  /** Which client opens the room; absent when the worker is older than the field (docs/connect.md). */
  transport?: 'livekit' | 'daily' | 'local';
}

/** Session (created), declared once for the service and both SDKs. */
export type { CreatedSession };

/**
 * A non-2xx answer of the service: the one class both SDKs throw (sdk/shared/service-error.ts), with
 * the spec's `{error, message}` as `.code` and `.message`. `sessionId`: the session a failed connect
 * created (connect again with it to reach that session).
 */
export { ServiceError };

const OPTION_KEYS = new Set(['publishableKey', 'baseUrl', 'fetch']);

/** The origin this module was served from (the api-stub's /sdk/browser.js), when it is http(s). */
function scriptOrigin(): string | null {
  try {
    const url = new URL(import.meta.url);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : null;
  } catch {
    return null;
  }
}

export interface ServiceClient {
  createSession(input: CreateSessionInput): Promise<CreatedSession>;
  /** Connects a voice session (creating it when no sessionId is given), for pages that run their own room client. */
  connect(input: ConnectInput): Promise<ConnectedRoom>;
  /** Mounts a created session's page into `container` (an element or a CSS selector). */
  mount(container: Element | string, session: CreatedSession | string, options?: MountOptions): MountedSession;
  /** createSession then mount, in one call. */
  start(container: Element | string, input: CreateSessionInput, options?: MountOptions): Promise<MountedSession>;
}

export function createServiceClient(options: ClientOptions): ServiceClient {
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.has(key)) throw new TypeError(`createServiceClient: unknown option "${key}"`);
  }
  if (typeof options.publishableKey !== 'string' || !/^pk_(test|live)_/.test(options.publishableKey)) {
    throw new TypeError('createServiceClient: publishableKey must be a pk_test_… or pk_live_… key (never a secret key)');
  }
  const baseUrl = (options.baseUrl ?? scriptOrigin() ?? globalThis.location?.origin ?? '').replace(/\/$/, '');
  if (!/^https?:\/\//.test(baseUrl)) throw new TypeError('createServiceClient: baseUrl must be an http(s) URL');
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);

  /** POSTs with the publishable key; a non-2xx answer becomes a ServiceError. */
  const postJson = async (
    path: string,
    fields: Record<string, unknown>,
  ): Promise<{ res: Response; body: Record<string, unknown> | null }> => {
    const res = await doFetch(`${baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ publishableKey: options.publishableKey, ...fields }),
    });
    const body = (await res.json().catch(() => null)) as Record<string, unknown> | null;
    if (!res.ok) {
      const code = typeof body?.error === 'string' ? body.error : 'internal_error';
      const message = typeof body?.message === 'string' ? body.message : `The service answered ${res.status}.`;
      const sessionId = typeof body?.sessionId === 'string' ? body.sessionId : null;
      throw new ServiceError({ status: res.status, code, message, sessionId, raw: body, requestId: res.headers.get('request-id') });
    }
    return { res, body };
  };

  // Sessions that a failed connect created, by interview and metadata: the next connect() with the
  // same input retries that session instead of creating another (docs/connect.md).
  const unfinished = new Map<string, string>();
  const connectOnce = async (input: ConnectInput, sessionId: string | undefined): Promise<ConnectedRoom> => {
    const { res, body } = await postJson('/api/v2/sdk/connect', {
      interviewId: input.interviewId,
      ...(sessionId ? { sessionId } : {}),
      ...(input.metadata ? { metadata: input.metadata } : {}),
    });
    if (!body || typeof body.sessionId !== 'string' || typeof body.room_url !== 'string' || typeof body.token !== 'string') {
      throw new ServiceError({
        status: res.status,
        code: 'internal_error',
        message: 'The service answered without a sessionId, room_url and token.',
        raw: body,
      });
    }
    const transport = isRoomTransportName(body.transport) ? { transport: body.transport } : {};
    return { sessionId: body.sessionId, room_url: body.room_url, token: body.token, ...transport };
  };
  const connect = async (input: ConnectInput): Promise<ConnectedRoom> => {
    if (input.sessionId) return connectOnce(input, input.sessionId);
    const key = JSON.stringify([input.interviewId, input.metadata ?? null]);
    const earlier = unfinished.get(key);
    try {
      const room = await connectOnce(input, earlier);
      unfinished.delete(key);
      return room;
    } catch (err) {
      if (!(err instanceof ServiceError)) throw err;
      if (err.sessionId) {
        // Bounded: a page that fails with many different inputs keeps only the latest few.
        if (unfinished.size >= 32) unfinished.delete(unfinished.keys().next().value!);
        unfinished.set(key, err.sessionId);
      } else if (earlier && (err.code === 'session_not_found' || err.code === 'session_not_connectable')) {
        // The session of the earlier failure is gone (its link expired): start afresh.
        unfinished.delete(key);
        return connect(input);
      }
      throw err;
    }
  };

  const createSession = async (input: CreateSessionInput): Promise<CreatedSession> => {
    const { res, body } = await postJson('/api/v2/sdk/sessions', {
      interviewId: input.interviewId,
      ...(input.metadata ? { metadata: input.metadata } : {}),
    });
    if (!body || typeof body.sessionId !== 'string' || typeof body.sessionUrl !== 'string') {
      throw new ServiceError({
        status: res.status,
        code: 'internal_error',
        message: 'The service answered without a sessionId and sessionUrl.',
        raw: body,
      });
    }
    return { sessionId: body.sessionId, sessionUrl: body.sessionUrl, expiresAt: String(body.expiresAt) };
  };

  const mount = (container: Element | string, session: CreatedSession | string, mountOptions: MountOptions = {}): MountedSession => {
    const element = typeof container === 'string' ? document.querySelector(container) : container;
    if (!element) throw new TypeError(`mount: no element matches ${String(container)}`);
    const sessionUrl = typeof session === 'string' ? session : session.sessionUrl;
    return mountSession(element, sessionUrl, options.publishableKey, mountOptions);
  };

  return {
    createSession,
    connect,
    mount,
    start: async (container, input, mountOptions) => mount(container, await createSession(input), mountOptions),
  };
}
