import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A, call, connect, reportTokenOf, startRoutingStack, type RoutingStack } from './routing-harness.ts';

/**
 * Metadata with `__proto__`, `constructor` and `prototype` keys travels verbatim through the whole
 * flow (issue 19): the spawn body the pipeline gets and the signed webhook the customer gets, byte
 * for byte as the client sent it, not just the retrieval answer.
 */
let stack: RoutingStack;
beforeAll(async () => {
  stack = await startRoutingStack();
});
afterAll(async () => {
  await stack?.stop();
});

describe('metadata keys that name prototype properties', () => {
  it('reach the spawn body and the webhook unchanged', async () => {
    const metadata = '{"__proto__":{"x":1},"constructor":"c","prototype":[{"__proto__":null}]}';
    const created = await call(
      'POST',
      `${stack.url}/api/v2/sdk/sessions`,
      `{"publishableKey":"${A.pk}","interviewId":"${A.dpl}","metadata":${metadata}}`,
    );
    expect(created.status).toBe(201);
    const id = created.body.sessionId as string;
    expect((await connect(stack, id)).status).toBe(200);
    const spawn = stack.hosted.requests.find((r) => r.body?.sessionId === id)!;
    expect(spawn.rawBody).toContain(`"metadata":${metadata}`);

    const report = await call(
      'POST',
      `${stack.url}/api/v2/worker/sessions/${id}/outcome`,
      { status: 'completed', response: { transcriptKey: 's3://t/1', summary: 'ok' } },
      { authorization: `Bearer ${reportTokenOf([stack.hosted], id)}` },
    );
    expect(report.status).toBe(200);
    await expect.poll(() => stack.receiver.received.some((r) => r.rawBody.includes(id)), { timeout: 5_000 }).toBe(true);
    const hook = stack.receiver.received.find((r) => r.rawBody.includes(id))!;
    expect(hook.rawBody).toContain(`"metadata":${metadata}`);
  });

  it('keeps a value -0 as -0 in retrieval, the spawn body and the webhook (issue 41)', async () => {
    const metadata = '{"z":-0,"list":[-0,0,-0.0],"nested":{"n":-0}}';
    const written = '{"z":-0,"list":[-0,0,-0],"nested":{"n":-0}}';
    const created = await fetch(`${stack.url}/api/v2/sdk/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"publishableKey":"${A.pk}","interviewId":"${A.dpl}","metadata":${metadata}}`,
    });
    expect(created.status).toBe(201);
    const id = ((await created.json()) as { sessionId: string }).sessionId;
    const retrieved = await fetch(`${stack.url}/api/v2/sdk/sessions/${id}`, { headers: { authorization: `Bearer ${A.sk}` } });
    expect(await retrieved.text()).toContain(`"metadata":${written}`);
    expect((await connect(stack, id)).status).toBe(200);
    expect(stack.hosted.requests.find((r) => r.body?.sessionId === id)!.rawBody).toContain(`"metadata":${written}`);
    const report = await call(
      'POST',
      `${stack.url}/api/v2/worker/sessions/${id}/outcome`,
      { status: 'completed', response: { transcriptKey: 's3://t/2', summary: 'ok' } },
      { authorization: `Bearer ${reportTokenOf([stack.hosted], id)}` },
    );
    expect(report.status).toBe(200);
    await expect.poll(() => stack.receiver.received.some((r) => r.rawBody.includes(id)), { timeout: 5_000 }).toBe(true);
    expect(stack.receiver.received.find((r) => r.rawBody.includes(id))!.rawBody).toContain(`"metadata":${written}`);
  });
});
