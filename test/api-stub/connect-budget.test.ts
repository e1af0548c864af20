import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KeyProvider } from '../../api-stub/crypto/key-provider.ts';
import { SPAWN_TIMEOUT_DEFAULT_MS } from '../../api-stub/routing-config.ts';
import { B, connect, newSession, startRoutingStack, WORKER_TOKEN, type RoutingStack } from './routing-harness.ts';

describe('the 10 s spawn budget and per-workspace spawn limits (default budget)', () => {
  let stack: RoutingStack;
  beforeAll(async () => {
    // Alpha's self-host settings come from the seed (encrypted on the way in); its worker hangs.
    stack = await startRoutingStack({ selfHostA: true, env: { SPAWN_MAX_IN_FLIGHT_PER_WORKSPACE: '2' } });
    expect(stack.config.routing.spawnTimeoutMs).toBe(SPAWN_TIMEOUT_DEFAULT_MS);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('a hanging worker yields worker_unreachable within the budget while another workspace spawns stay fast', async () => {
    stack.worker.setBehaviour({ kind: 'hang' });
    const hanging = [await newSession(stack), await newSession(stack)].map((id) => connect(stack, id));
    await expect.poll(() => stack.worker.requests.length, { timeout: 3_000 }).toBe(2);

    // Alpha is at its cap: the next spawn is refused at once instead of queueing behind the hang.
    const capped = await connect(stack, await newSession(stack));
    expect(capped.status).toBe(429);
    expect(capped.body.error).toBe('rate_limit_exceeded');
    expect(capped.headers.get('retry-after')).toBe('2');
    expect(capped.ms).toBeLessThan(3_000); // at once, not after the hang's 10 s (wide: a loaded machine)

    // Beta's spawns go to the hosted pipeline, unaffected by alpha's hanging worker.
    const betaTimes: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const res = await connect(stack, await newSession(stack, B), B);
      expect(res.status).toBe(200);
      expect(res.body.route).toBe('hosted');
      betaTimes.push(res.ms);
    }
    expect(Math.max(...betaTimes)).toBeLessThan(3_000);

    for (const res of await Promise.all(hanging)) {
      expect(res.status).toBe(504);
      expect(res.body).toEqual({
        error: 'worker_unreachable',
        message: 'The voice worker is unreachable. Check the endpoint status in Settings → Server → Self-host. (timeout)',
      });
      expect(res.ms).toBeGreaterThanOrEqual(SPAWN_TIMEOUT_DEFAULT_MS - 50);
      expect(res.ms).toBeLessThan(SPAWN_TIMEOUT_DEFAULT_MS + 1_500);
    }
    // The slots are free again.
    stack.worker.setBehaviour({ kind: 'ok' });
    const after = await connect(stack, await newSession(stack));
    expect(after.status).toBe(200);
    expect(after.body.route).toBe('self_hosted');
    expect(stack.logs.join('\n')).not.toContain(WORKER_TOKEN);
  }, 30_000);
});

describe('decryption counts against the budget', () => {
  let stack: RoutingStack;
  beforeAll(async () => {
    stack = await startRoutingStack({ selfHostA: true, env: { SPAWN_TIMEOUT_MS: '800' } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('a key provider that never answers ends in worker_unreachable at the budget, before any call to the worker', async () => {
    const real = stack.runtime.routing.keys!;
    const stuck: KeyProvider = {
      kind: real.kind,
      keyId: real.keyId,
      wrap: (k, c) => real.wrap(k, c),
      unwrap: () => new Promise<Buffer>(() => undefined),
    };
    stack.runtime.routing.keys = stuck;
    const res = await connect(stack, await newSession(stack));
    stack.runtime.routing.keys = real;
    expect(res.status).toBe(504);
    expect(res.body.error).toBe('worker_unreachable');
    expect(res.ms).toBeGreaterThanOrEqual(750);
    expect(res.ms).toBeLessThan(4_000); // the 0.8 s budget, far from the 10 s default
    expect(stack.worker.requests).toHaveLength(0);
    expect((await connect(stack, await newSession(stack))).status).toBe(200);
  });
});
