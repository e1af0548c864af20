import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiStub, testSeed, K, type RunningApiStub } from './harness.ts';

/**
 * Issue 41: a body declared larger than BODY_LIMIT_BYTES was read to its end before it was refused
 * (10 GB declared: 10 GB read). It is refused from its Content-Length, before any of it is sent:
 * the client here sends the headers only and must get the answer, 400 invalid_request as for any
 * oversized body, on a connection the server then closes.
 */
describe('a body declared larger than the limit', () => {
  let stub: RunningApiStub;
  beforeAll(async () => {
    stub = await startApiStub({ seed: testSeed() });
  });
  afterAll(() => stub.stop());

  /** Sends `head` (headers only, no body) and collects what comes back until the server closes. */
  function headersOnly(head: string): Promise<{ answer: string; closedByServer: boolean }> {
    const { port } = new URL(stub.url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1');
      let answer = '';
      // Wide margin: the answer comes in milliseconds; before the fix it never came (the body was awaited).
      const deadline = setTimeout(() => {
        socket.destroy();
        resolve({ answer, closedByServer: false });
      }, 10_000);
      socket.on('data', (d: Buffer) => (answer += d.toString()));
      socket.on('error', reject);
      socket.on('close', () => {
        clearTimeout(deadline);
        resolve({ answer, closedByServer: true });
      });
      socket.write(head);
    });
  }

  it('answers 400 invalid_request from the Content-Length, without waiting for the body, and closes', async () => {
    const head = [
      'POST /api/v2/sdk/sessions HTTP/1.1',
      'Host: 127.0.0.1',
      'Content-Type: application/json',
      `Content-Length: ${10 * 1024 ** 3}`,
      '',
      '',
    ].join('\r\n');
    const { answer, closedByServer } = await headersOnly(head);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toMatch(/\r\nconnection: close\r\n/i);
    const body = JSON.parse(answer.split('\r\n\r\n')[1]!) as unknown;
    expect(body).toEqual({ error: 'invalid_request', message: `The request body is larger than ${stub.config.bodyLimitBytes}b.` });
    expect(closedByServer).toBe(true);
    expect(Number(stub.db.prepare('SELECT COUNT(*) AS n FROM sessions').get()!.n)).toBe(0);
  });

  it('still reads and accepts a body within the limit', async () => {
    const body = JSON.stringify({ publishableKey: K.pk, interviewId: K.active });
    const res = await fetch(`${stub.url}/api/v2/sdk/sessions`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
    expect(res.status).toBe(201);
  });
});
