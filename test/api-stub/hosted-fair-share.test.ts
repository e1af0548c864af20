import { afterEach, describe, expect, it } from 'vitest';
import { hostedShare, LEARNED_CAPACITY_MEMORY_MS } from '../../api-stub/connect/hosted-share.ts';
import { B, call, connect, newSession, reportTokenOf, startRoutingStack, type RoutingStack } from './routing-harness.ts';

/**
 * The cap on hosted sessions per workspace as a fair share of the pool actually there (issue 19):
 * with the default cap of 20, one publishable key took both slots of a 2-slot pool and another
 * workspace got 503 for 30 s. Real api-stub, real hosted-pipeline stand-in over HTTPS.
 */
let stack: RoutingStack | undefined;
afterEach(async () => {
  await stack?.stop();
  stack = undefined;
});

const completed = (s: RoutingStack, id: string) =>
  call(
    'POST',
    `${s.url}/api/v2/worker/sessions/${id}/outcome`,
    { status: 'completed', response: { transcriptKey: 's3://t/1', summary: 'ok' } },
    { authorization: `Bearer ${reportTokenOf([s.hosted], id)}` },
  );

describe('the fair share of the hosted pool', () => {
  it('is max(1, floor(capacity / (active workspaces + 1))), never above the configured cap', () => {
    expect(hostedShare({ capacity: 2, configuredCap: 20, activeWorkspaces: 1 })).toBe(1);
    expect(hostedShare({ capacity: 2, configuredCap: 20, activeWorkspaces: 2 })).toBe(1);
    expect(hostedShare({ capacity: 100, configuredCap: 20, activeWorkspaces: 1 })).toBe(20);
    expect(hostedShare({ capacity: 100, configuredCap: 100, activeWorkspaces: 2 })).toBe(33);
    expect(hostedShare({ capacity: null, configuredCap: 20, activeWorkspaces: 5 })).toBe(20);
  });

  it('keeps one key from taking every slot of a 2-slot pool (HOSTED_PIPELINE_CAPACITY=2): the other workspace gets in', async () => {
    const s = (stack = await startRoutingStack({ env: { HOSTED_PIPELINE_CAPACITY: '2' } }));
    expect((await connect(s, await newSession(s))).status).toBe(200);
    const spawns = s.hosted.requests.length;
    const refused = await connect(s, await newSession(s));
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      error: 'rate_limit_exceeded',
      message: expect.stringMatching(/holds 1 voice sessions on the hosted pipeline, its fair share of the pool's 2 slots/),
    });
    expect(refused.headers.get('retry-after')).toBe('30');
    // Refused before the pool heard of it; the second slot is still free for someone else.
    expect(s.hosted.requests.length).toBe(spawns);
    expect((await connect(s, await newSession(s, B), B)).status).toBe(200);
  });

  it('learns the capacity from the pool refusing a spawn (503) and shares it from then on', async () => {
    const s = (stack = await startRoutingStack());
    // Unknown capacity: the configured cap (20) applies, and one key takes both slots of the pool.
    const [one, two] = [await newSession(s), await newSession(s)];
    expect((await connect(s, one!)).status).toBe(200);
    expect((await connect(s, two!)).status).toBe(200);
    // A 503 that is not "no warm slot" (a draining replica, say) teaches nothing.
    s.hosted.setBehaviour({ kind: 'status', status: 503 });
    expect((await connect(s, await newSession(s))).body.error).toBe('no_capacity');
    s.hosted.setBehaviour({ kind: 'ok' });
    const [three, four] = [await newSession(s), await newSession(s)];
    expect((await connect(s, three!)).status).toBe(200);
    expect((await completed(s, three!)).status).toBe(200);
    // The pool is full: it refuses the next spawn with no_capacity. The api-stub now knows it holds 2.
    s.hosted.setBehaviour({ kind: 'full' });
    expect((await connect(s, four!)).body.error).toBe('no_capacity');
    s.hosted.setBehaviour({ kind: 'ok' });

    // One session ends: A holds 1, its share of 2 slots, so its next connect is refused by us, not by the
    // pool, and workspace B gets the free slot.
    expect((await completed(s, one!)).status).toBe(200);
    const mine = await connect(s, await newSession(s));
    expect(mine.status).toBe(429);
    expect(mine.body.message).toMatch(/fair share of the pool's 2 slots/);
    expect((await connect(s, await newSession(s, B), B)).status).toBe(200);

    // The estimate is forgotten ten minutes after the last refusal: then only the configured cap applies.
    s.clock.now = Date.now() + LEARNED_CAPACITY_MEMORY_MS + 1_000;
    try {
      expect((await connect(s, await newSession(s))).status).toBe(200);
    } finally {
      s.clock.now = null;
    }
  });
});
