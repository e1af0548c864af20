import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A, call, connect, newSession, startRoutingStack, WORKER_TOKEN, type RoutingStack } from './routing-harness.ts';

/**
 * Issue 41: a connect whose self-host endpoint the address policy refuses told the caller (anyone with
 * the publishable key) what the endpoint's name resolves to. The answer must not; the log has it.
 * `localhost` is left off the allow-list here, so its loopback address is refused for real.
 */
let stack: RoutingStack;

beforeAll(async () => {
  stack = await startRoutingStack({ env: { EGRESS_ALLOW_HOSTS: '127.0.0.1', SPAWN_TIMEOUT_MS: '3000' } });
});
afterAll(async () => {
  await stack?.stop();
});

describe('a connect refused by the address policy', () => {
  it('answers 502 worker_error without the resolved address, and logs it', async () => {
    const endpoint = new URL(stack.worker.url);
    endpoint.hostname = 'localhost';
    const put = await call(
      'PUT',
      `${stack.url}/api/v2/workspace/self-host`,
      { pipelineEndpoint: endpoint.toString(), pipelineToken: WORKER_TOKEN },
      { authorization: `Bearer ${A.sk}` },
    );
    expect(put.status).toBe(200);
    const res = await connect(stack, await newSession(stack));
    expect(res.status).toBe(502);
    expect(res.body).toEqual({
      error: 'worker_error',
      message: expect.stringContaining('resolves to an address the service does not call'),
    });
    for (const revealing of ['127.0.0.1', '::1', 'loopback']) expect(res.body.message).not.toContain(revealing);
    const logged = stack.logs.find((line) => line.includes('spawn call failed'));
    expect(logged).toMatch(/egress_refused/);
    expect(logged).toMatch(/localhost resolves to (127\.0\.0\.1|::1), a loopback address/);
  });
});
