import { describe, expect, it } from 'vitest';
import {
  ConnectionError,
  errorFromResponse,
  parseRetryAfter,
  ServiceError,
  RateLimitError,
  NotFoundError,
  InvalidRequestError,
  AuthenticationError,
  PermissionError,
  ConflictError,
  GoneError,
  InternalServerError,
} from './errors.ts';
import { retryDelayMs, shouldRetry } from './retry.ts';

const policy = { maxRetries: 3, initialDelayMs: 100, maxDelayMs: 1000, maxRetryAfterSeconds: 60 };
const err = (status: number, code: string, retryAfter?: string) =>
  errorFromResponse(
    status,
    JSON.stringify({ error: code, message: `m ${code}` }),
    new Headers(retryAfter ? { 'Retry-After': retryAfter } : {}),
  );

describe('errorFromResponse', () => {
  it.each([
    [400, 'invalid_request', InvalidRequestError],
    [401, 'invalid_key', AuthenticationError],
    [403, 'cross_workspace', PermissionError],
    [404, 'interview_not_found', NotFoundError],
    [404, 'session_not_found', NotFoundError],
    [409, 'interview_not_active', ConflictError],
    [410, 'interview_expired', GoneError],
    [429, 'rate_limit_exceeded', RateLimitError],
    [500, 'internal_error', InternalServerError],
  ])('maps %i %s to its subclass with status, code and message', (status, code, Type) => {
    const e = err(status, code);
    expect(e).toBeInstanceOf(Type);
    expect(e).toBeInstanceOf(ServiceError);
    expect(e.status).toBe(status);
    expect(e.code).toBe(code);
    expect(e.message).toBe(`m ${code}`);
    expect(e.name).toBe(Type.name);
  });

  it('maps a body that is not ours by status, keeping the raw text', () => {
    const e = errorFromResponse(502, '<html>bad gateway</html>', new Headers());
    expect(e).toBeInstanceOf(InternalServerError);
    expect(e.code).toBe('internal_error');
    expect(e.raw).toBe('<html>bad gateway</html>');
    expect(errorFromResponse(418, '{}', new Headers()).constructor).toBe(ServiceError);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfter('7')).toBe(7);
    expect(parseRetryAfter(new Date(Date.parse('2026-01-01T00:00:30Z')).toUTCString(), Date.parse('2026-01-01T00:00:00Z'))).toBe(30);
    expect(parseRetryAfter('soon')).toBeNull();
    expect(err(429, 'rate_limit_exceeded', '3').retryAfterSeconds).toBe(3);
  });
});

describe('shouldRetry', () => {
  it('retries connection failures, 500/502/503/504 and 429, and nothing else', () => {
    expect(shouldRetry(new ConnectionError({ status: 0, code: 'connection_error', message: 'x' }), 0, policy)).toBe(true);
    for (const s of [500, 502, 503, 504]) expect(shouldRetry(err(s, 'internal_error'), 0, policy)).toBe(true);
    expect(shouldRetry(err(429, 'rate_limit_exceeded', '1'), 0, policy)).toBe(true);
    for (const [s, c] of [
      [400, 'invalid_request'],
      [401, 'invalid_key'],
      [403, 'cross_workspace'],
      [404, 'session_not_found'],
      [409, 'interview_not_active'],
      [410, 'interview_expired'],
    ] as const) {
      expect(shouldRetry(err(s, c), 0, policy)).toBe(false);
    }
    expect(shouldRetry(new Error('bug'), 0, policy)).toBe(false);
  });

  it('stops at maxRetries and when Retry-After is longer than we wait', () => {
    expect(shouldRetry(err(500, 'internal_error'), 3, policy)).toBe(false);
    expect(shouldRetry(err(429, 'rate_limit_exceeded', '61'), 0, policy)).toBe(false);
  });
});

describe('retryDelayMs', () => {
  it('doubles up to the cap, with jitter in the upper half', () => {
    expect(retryDelayMs(0, policy, null, () => 0)).toBe(50);
    expect(retryDelayMs(0, policy, null, () => 1)).toBe(100);
    expect(retryDelayMs(2, policy, null, () => 1)).toBe(400);
    expect(retryDelayMs(10, policy, null, () => 1)).toBe(1000);
    expect(retryDelayMs(10, policy, null, () => 0)).toBe(500);
  });
  it('waits at least the Retry-After', () => {
    expect(retryDelayMs(0, policy, 2, () => 0)).toBe(2000);
  });
});
