import { randomUUID } from 'node:crypto';
import { ConnectionError, errorFromResponse, ServiceError } from './errors.ts';
import { retryDelayMs, shouldRetry, type RetryPolicy } from './retry.ts';
import type { CreatedSession, Session } from '../../lib/api-types.ts';

/** The session wire types are declared once, in lib/api-types.ts, and re-exported by name. */
export type { CreatedSession, Session };

export interface ServiceClientOptions {
  /** The service's base address, e.g. https://app.example.com (no trailing path). */
  baseUrl: string;
  /** `sk_…`: needed for sessions.retrieve. Keep it on your server. */
  secretKey?: string;
  /** `pk_…`: the default key for sessions.create. */
  publishableKey?: string;
  /** Retries after the first attempt (default 2; 0 turns retries off). */
  maxRetries?: number;
  /** Per-attempt timeout (default 30 000 ms). */
  timeoutMs?: number;
  initialRetryDelayMs?: number;
  maxRetryDelayMs?: number;
  maxRetryAfterSeconds?: number;
  /** For tests and unusual runtimes. */
  fetch?: typeof fetch;
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

const ALLOWED_OPTIONS = new Set([
  'baseUrl',
  'secretKey',
  'publishableKey',
  'maxRetries',
  'timeoutMs',
  'initialRetryDelayMs',
  'maxRetryDelayMs',
  'maxRetryAfterSeconds',
  'fetch',
  'random',
  'sleep',
]);

function validateInteger(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new TypeError(`${name} must be an integer from ${min} to ${max}, got ${String(value)}`);
  }
  return value;
}

export interface CreateSessionParams {
  interviewId: string;
  metadata?: Record<string, unknown>;
  /** Overrides the client's publishableKey. */
  publishableKey?: string;
}

export interface RequestOptions {
  /** Sent as Idempotency-Key; a random UUID when absent. Reuse it to make your own retries safe. */
  idempotencyKey?: string;
}

const USER_AGENT = 'service-server-sdk/1.3.0 (node)';
const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export class ServiceClient {
  readonly sessions: {
    create: (params: CreateSessionParams, options?: RequestOptions) => Promise<CreatedSession>;
    retrieve: (sessionId: string) => Promise<Session>;
  };
  private readonly baseUrl: string;
  private readonly policy: RetryPolicy;
  private readonly timeoutMs: number;
  private readonly options: ServiceClientOptions;

  constructor(options: ServiceClientOptions) {
    if (!options || typeof options !== 'object') throw new TypeError('ServiceClient needs an options object with baseUrl');
    const unknown = Object.keys(options).filter((k) => !ALLOWED_OPTIONS.has(k));
    if (unknown.length > 0) throw new TypeError(`Unknown ServiceClient option(s): ${unknown.join(', ')}`);
    let url: URL;
    try {
      url = new URL(options.baseUrl);
    } catch {
      throw new TypeError(`baseUrl must be an absolute URL, got ${JSON.stringify(options.baseUrl)}`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TypeError('baseUrl must use https (or http for local testing)');
    if (options.secretKey !== undefined && !options.secretKey.startsWith('sk_')) throw new TypeError('secretKey must start with sk_');
    if (options.publishableKey !== undefined && !options.publishableKey.startsWith('pk_'))
      throw new TypeError('publishableKey must start with pk_');
    this.options = options;
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.timeoutMs = validateInteger('timeoutMs', options.timeoutMs ?? 30_000, 1, 600_000);
    this.policy = {
      maxRetries: validateInteger('maxRetries', options.maxRetries ?? 2, 0, 10),
      initialDelayMs: validateInteger('initialRetryDelayMs', options.initialRetryDelayMs ?? 500, 0, 60_000),
      maxDelayMs: validateInteger('maxRetryDelayMs', options.maxRetryDelayMs ?? 8_000, 0, 600_000),
      maxRetryAfterSeconds: validateInteger('maxRetryAfterSeconds', options.maxRetryAfterSeconds ?? 60, 0, 3_600),
    };
    this.sessions = {
      create: (params, requestOptions) => this.createSession(params, requestOptions),
      retrieve: (sessionId) => this.retrieveSession(sessionId),
    };
  }

  private async createSession(params: CreateSessionParams, requestOptions: RequestOptions = {}): Promise<CreatedSession> {
    if (!params || typeof params !== 'object' || typeof params.interviewId !== 'string') {
      throw new TypeError('sessions.create needs { interviewId: "dpl_…" }');
    }
    const publishableKey = params.publishableKey ?? this.options.publishableKey;
    if (!publishableKey) throw new TypeError('sessions.create needs a publishableKey (in the params or the client options)');
    const body: Record<string, unknown> = { publishableKey, interviewId: params.interviewId };
    if (params.metadata !== undefined) body.metadata = params.metadata;
    // One key for every attempt of this call: a retry returns the first session, never a second.
    const idempotencyKey = requestOptions.idempotencyKey ?? randomUUID();
    return this.request<CreatedSession>('POST', '/api/v2/sdk/sessions', {
      body: JSON.stringify(body),
      headers: { 'Idempotency-Key': idempotencyKey },
    });
  }

  private async retrieveSession(sessionId: string): Promise<Session> {
    if (!this.options.secretKey) throw new TypeError('sessions.retrieve needs the client option secretKey (sk_…)');
    if (typeof sessionId !== 'string' || sessionId === '') throw new TypeError('sessions.retrieve needs a sessionId string (inv_…)');
    return this.request<Session>('GET', `/api/v2/sdk/sessions/${encodeURIComponent(sessionId)}`, {
      headers: { Authorization: `Bearer ${this.options.secretKey}` },
    });
  }

  private async request<T>(method: string, path: string, init: { body?: string; headers: Record<string, string> }): Promise<T> {
    const sleep = this.options.sleep ?? defaultSleep;
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.attempt<T>(method, path, init);
      if (outcome.ok) return outcome.value;
      if (!shouldRetry(outcome.error, attempt, this.policy)) throw outcome.error;
      await sleep(retryDelayMs(attempt, this.policy, outcome.error.retryAfterSeconds, this.options.random));
    }
  }

  /** One HTTP exchange; never throws. */
  private async attempt<T>(
    method: string,
    path: string,
    init: { body?: string; headers: Record<string, string> },
  ): Promise<{ ok: true; value: T } | { ok: false; error: ServiceError }> {
    const doFetch = this.options.fetch ?? fetch;
    let res: Response;
    let text: string;
    try {
      res = await doFetch(`${this.baseUrl}${path}`, {
        method,
        body: init.body,
        headers: {
          Accept: 'application/json',
          'User-Agent': USER_AGENT,
          ...(init.body ? { 'Content-Type': 'application/json' } : {}),
          ...init.headers,
        },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      text = await res.text();
    } catch (err) {
      const reason = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
      return {
        ok: false,
        error: new ConnectionError({ status: 0, code: 'connection_error', message: `No answer from ${this.baseUrl}: ${reason}`, raw: err }),
      };
    }
    if (!res.ok) return { ok: false, error: errorFromResponse(res.status, text, res.headers) };
    try {
      return { ok: true, value: JSON.parse(text) as T };
    } catch {
      return {
        ok: false,
        error: new ServiceError({
          status: res.status,
          code: 'invalid_response',
          message: 'The service answered 2xx with a body that is not JSON.',
          raw: text,
        }),
      };
    }
  }
}
