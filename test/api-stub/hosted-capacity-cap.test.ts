import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A, B, call, connect, newSession, reportTokenOf, startRoutingStack, type RoutingStack } from './routing-harness.ts';

/**
 * The per-workspace cap on sessions held at once on the shared hosted capacity: a publishable key
 * can connect without ever joining, and each connect holds a hosted warm slot until the worker's join
 * timeout; past HOSTED_SESSIONS_PER_WORKSPACE held sessions, connect answers 429 for that workspace only.
 */
let stack: RoutingStack;
beforeAll(async () => {
  stack = await startRoutingStack({ env: { HOSTED_SESSIONS_PER_WORKSPACE: '2', HOSTED_SESSION_HOLD_SECONDS: '60' } });
});
afterAll(async () => {
  await stack?.stop();
});

const outcome = (id: string, body: unknown) =>
  call('POST', `${stack.url}/api/v2/worker/sessions/${id}/outcome`, body, { authorization: `Bearer ${reportTokenOf([stack.hosted], id)}` });

describe('hosted sessions held per workspace', () => {
  it(
    'refuses a third held session with 429 rate_limit_exceeded and Retry-After; reconnects and other workspaces are not affected; an ' +
      'outcome frees a slot',
    async () => {
      const [one, two, three] = [await newSession(stack), await newSession(stack), await newSession(stack)];
      expect((await connect(stack, one!)).status).toBe(200);
      expect((await connect(stack, two!)).status).toBe(200);
      const spawnsBefore = stack.hosted.requests.length;
      const refused = await connect(stack, three!);
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({
        error: 'rate_limit_exceeded',
        message: expect.stringMatching(/holds 2 voice sessions on the hosted pipeline/),
      });
      expect(refused.headers.get('retry-after')).toBe('30');
      // Refused before any spawn: the hosted pipeline never heard of it.
      expect(stack.hosted.requests.length).toBe(spawnsBefore);
      // A held session reconnecting is not a new hold; another workspace has its own cap.
      expect((await connect(stack, one!)).status).toBe(200);
      expect((await connect(stack, await newSession(stack, B), B)).status).toBe(200);
      // The spec's connect body (creating the session) is capped the same way.
      expect((await call('POST', `${stack.url}/api/v2/sdk/connect`, { publishableKey: A.pk, interviewId: A.dpl })).status).toBe(429);

      expect((await outcome(one!, { status: 'completed', response: { transcriptKey: 's3://t/1', summary: 'ok' } })).status).toBe(200);
      expect((await connect(stack, three!)).status).toBe(200);
      expect((await connect(stack, await newSession(stack))).status).toBe(429);
      expect((await outcome(two!, { status: 'failed', reason: 'llm_timeout' })).status).toBe(200);
      expect((await connect(stack, await newSession(stack))).status).toBe(200);
    },
  );

  it('a spawn the pipeline refused holds nothing, and a hold lapses after HOSTED_SESSION_HOLD_SECONDS', async () => {
    // Both slots are held by the end of the previous test.
    expect((await connect(stack, await newSession(stack))).status).toBe(429);
    stack.clock.now = Date.now() + 61_000;
    try {
      stack.hosted.setBehaviour({ kind: 'status', status: 503 });
      for (let i = 0; i < 3; i += 1) expect((await connect(stack, await newSession(stack))).body.error).toBe('no_capacity');
      stack.hosted.setBehaviour({ kind: 'ok' });
      expect((await connect(stack, await newSession(stack))).status).toBe(200);
      expect((await connect(stack, await newSession(stack))).status).toBe(200);
      expect((await connect(stack, await newSession(stack))).status).toBe(429);
    } finally {
      stack.hosted.setBehaviour({ kind: 'ok' });
      stack.clock.now = null;
    }
  });
});
