import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceError } from './service-error.ts';
import { ServiceError as ServerServiceError, NotFoundError, ServiceClient } from '../server/index.ts';
import { ServiceError as BrowserServiceError, createServiceClient } from '../browser/index.ts';

// One real server answers every request with the same spec error: both SDKs must raise the same
// class with the same fields, so that one `catch (e) { if (e instanceof ServiceError) … e.code }` fits both.
let server: Server;
let baseUrl: string;
beforeAll(async () => {
  server = createServer((_req, res) => {
    res.writeHead(404, { 'content-type': 'application/json', 'request-id': 'req_shape' });
    res.end(JSON.stringify({ error: 'interview_not_found', message: 'No interview dpl_nope.', sessionId: 'inv_failed' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const fieldsOf = (e: ServiceError) => ({
  status: e.status,
  code: e.code,
  message: e.message,
  requestId: e.requestId,
  raw: e.raw,
  retryAfterSeconds: e.retryAfterSeconds,
  sessionId: e.sessionId,
});

describe('ServiceError: one class for both SDKs', () => {
  it('is the same class exported by the server and the browser SDK', () => {
    expect(ServerServiceError).toBe(ServiceError);
    expect(BrowserServiceError).toBe(ServiceError);
  });

  it('carries the same fields whichever SDK met the error', async () => {
    const fromServer = await new ServiceClient({ baseUrl, secretKey: 'sk_test_x', maxRetries: 0 }).sessions
      .retrieve('inv_x')
      .catch((e: unknown) => e);
    const fromBrowser = await createServiceClient({ baseUrl, publishableKey: 'pk_test_x' })
      .connect({ interviewId: 'dpl_nope' })
      .catch((e: unknown) => e);
    expect(fromServer).toBeInstanceOf(ServiceError);
    expect(fromServer).toBeInstanceOf(NotFoundError);
    expect(fromBrowser).toBeInstanceOf(ServiceError);
    const expected = {
      status: 404,
      code: 'interview_not_found',
      message: 'No interview dpl_nope.',
      requestId: 'req_shape',
      raw: { error: 'interview_not_found', message: 'No interview dpl_nope.', sessionId: 'inv_failed' },
      retryAfterSeconds: null,
      sessionId: 'inv_failed',
    };
    expect(fieldsOf(fromServer as ServiceError)).toEqual(expected);
    expect(fieldsOf(fromBrowser as ServiceError)).toEqual(expected);
  });
});
