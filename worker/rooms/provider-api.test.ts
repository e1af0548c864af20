import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callProviderApi, MAX_ANSWER_BYTES, RoomProviderApiError } from './provider-api.ts';

/**
 * A room provider's 2xx answer is checked before it is read (issue 19): not a JSON object, larger
 * than MAX_ANSWER_BYTES, or not of the call's schema, it fails with 502 `invalid_answer` and a
 * message that names the call and the field, never the credentials.
 */
let server: Server;
let url = '';
let next: { status: number; body: string | Buffer } = { status: 200, body: '{}' };

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    res.writeHead(next.status, { 'content-type': 'application/json' });
    res.end(next.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/rooms`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const Room = z.object({ name: z.string().min(1), url: z.string() });
const call = (answer?: z.ZodType) =>
  callProviderApi<{ name: string }>({
    method: 'POST',
    url,
    bearer: 'secret-api-key-123',
    timeoutMs: 5000,
    describe: 'test API CreateRoom',
    readError: (json) => ({ code: json.error, detail: json.info }),
    ...(answer ? { answer } : {}),
  });

async function refused(p: Promise<unknown>): Promise<RoomProviderApiError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RoomProviderApiError);
  expect((err as Error).message).not.toContain('secret-api-key');
  return err as RoomProviderApiError;
}

describe('room provider answers', () => {
  it('passes a well-formed answer through', async () => {
    next = { status: 200, body: JSON.stringify({ name: 'r1', url: 'https://x/r1', extra: true }) };
    expect(await call(Room)).toMatchObject({ name: 'r1', url: 'https://x/r1' });
  });

  it('refuses a 2xx body that is not a JSON object', async () => {
    for (const body of ['[]', 'null', '"room"', '<html>ok</html>']) {
      next = { status: 200, body };
      expect(await refused(call()), body).toMatchObject({ status: 502, code: 'invalid_answer' });
    }
  });

  it('refuses an answer of the wrong shape, naming the field', async () => {
    next = { status: 200, body: JSON.stringify({ name: 5 }) };
    const err = await refused(call(Room));
    expect(err).toMatchObject({ status: 502, code: 'invalid_answer' });
    expect(err.message).toBe('test API CreateRoom failed: the answer (HTTP 200) is malformed (name: invalid_type)');
  });

  it('refuses a huge answer without buffering it all', async () => {
    next = { status: 200, body: Buffer.alloc(MAX_ANSWER_BYTES + 10, 0x20) };
    expect(await refused(call())).toMatchObject({ status: 502, code: 'invalid_answer' });
  });

  it('still reads the error of a non-2xx answer', async () => {
    next = { status: 429, body: JSON.stringify({ error: 'rate-limit', info: 'slow down' }) };
    expect(await refused(call(Room))).toMatchObject({
      status: 429,
      code: 'rate-limit',
      message: 'test API CreateRoom failed: 429 rate-limit: slow down',
    });
  });
});
