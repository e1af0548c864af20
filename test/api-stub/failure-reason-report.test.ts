import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, connect, newSession, reportTokenOf, startRoutingStack, type RoutingStack } from './routing-harness.ts';

/**
 * The api-stub checks a reported failure reason against the catalogue (lib/failure-reasons.ts): a
 * known one passes quietly; an unknown one (a newer worker) is kept and passed on, never refused
 * (refusing would lose the outcome), and a warning names it (docs/webhooks.md, "Failure reasons").
 */
let stack: RoutingStack;
beforeAll(async () => {
  stack = await startRoutingStack();
});
afterAll(async () => {
  await stack?.stop();
});

async function failWith(reason: string): Promise<string> {
  const id = await newSession(stack);
  expect((await connect(stack, id)).status).toBe(200);
  const res = await call(
    'POST',
    `${stack.url}/api/v2/worker/sessions/${id}/outcome`,
    { status: 'failed', reason },
    { authorization: `Bearer ${reportTokenOf([stack.hosted], id)}` },
  );
  expect(res.status).toBe(200);
  return id;
}

const warnings = () => stack.logs.filter((line) => line.includes('not in the catalogue'));
const failedReasonOf = (id: string) =>
  stack.receiver.received
    .map((r) => JSON.parse(r.rawBody) as { type: string; data: { sessionId: string; reason: string } })
    .find((e) => e.type === 'interview.failed' && e.data.sessionId === id)?.data.reason;

describe('reported failure reasons', () => {
  it('passes a catalogue reason on without a warning', async () => {
    const id = await failWith('llm_timeout');
    await expect.poll(() => failedReasonOf(id), { timeout: 5_000 }).toBe('llm_timeout');
    expect(warnings()).toEqual([]);
  });

  it('keeps an unknown reason, passes it on, and warns naming it', async () => {
    const id = await failWith('quantum_flux');
    await expect.poll(() => failedReasonOf(id), { timeout: 5_000 }).toBe('quantum_flux');
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toContain('quantum_flux');
    expect(warnings()[0]).toContain(id);
  });
});
