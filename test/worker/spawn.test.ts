import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-compatible.ts';
import { startOtlpReceiver, type OtlpReceiver } from '../fakes/otlp-receiver.ts';
import { waitFor } from '../harness/ports.ts';
import {
  baseEnv,
  call,
  spawnBody,
  startFakeBackend,
  startWorkerProcess,
  waitIdleSlots,
  WORKER_TOKEN,
  type FakeBackend,
  type WorkerProcess,
} from './harness.ts';

/** The spawn API at the edge: auth, validation, size limit, idempotency, capacity, probes, metrics. */
let openai: FakeOpenAI;
let backend: FakeBackend;
let worker: WorkerProcess;
let otlp: OtlpReceiver;

beforeAll(async () => {
  [openai, backend, otlp] = await Promise.all([startFakeOpenAI({ voice: 'tone' }), startFakeBackend(), startOtlpReceiver()]);
  worker = await startWorkerProcess(
    baseEnv({
      redisUrl: inject('redisUrl'),
      backendUrl: backend.url,
      llmUrl: openai.url,
      REDIS_KEY_PREFIX: `spawn-${Date.now()}`,
      WARM_POOL_SIZE: '2',
      RETRY_AFTER_SECONDS: '7',
      SPAWN_BODY_LIMIT_BYTES: '4096',
      JOIN_TIMEOUT_SECONDS: '3',
      // The JSON protocol, chosen only by the standard variable (the interview test uses the protobuf default).
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${otlp.url}/v1/traces`,
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    }),
  );
  await worker.waitReady();
  await waitIdleSlots(worker, 2);
});

afterAll(async () => {
  await worker?.stop();
  await Promise.all([openai?.close(), backend?.close(), otlp?.close()]);
});

describe('spawn authentication', () => {
  it('answers 401 invalid_token without a bearer token', async () => {
    const res = await call(`${worker.url}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(spawnBody()),
    });
    expect(res.status).toBe(401);
    expect(JSON.parse(res.text)).toEqual({ error: 'invalid_token', message: expect.stringContaining('Bearer') });
  });

  it('answers 401 for a wrong token, including one that differs only in length', async () => {
    for (const token of ['nope', `${WORKER_TOKEN}x`, WORKER_TOKEN.slice(0, -1)]) {
      const res = await worker.spawnSession(spawnBody(), token);
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_token');
      expect(JSON.stringify(res.body)).not.toContain(WORKER_TOKEN);
    }
  });
});

describe('spawn validation', () => {
  it.each([
    ['not JSON', '{"sessionId":', /not valid JSON/],
    ['a missing sessionId', JSON.stringify({ ...spawnBody(), sessionId: undefined }), /sessionId/],
    ['a malformed interviewId', JSON.stringify(spawnBody({ interviewId: 'abc' })), /interviewId: must look like dpl_/],
    ['no questions', JSON.stringify(spawnBody({ interview: { intro: 'Hi', questions: [], closing: 'Bye' } })), /interview.questions/],
    ['a non-object metadata', JSON.stringify(spawnBody({ metadata: 'x' })), /metadata/],
    // Bounded before anything walks it: deeper metadata reached Redis and came back as a 503 "outage".
    [
      'metadata nested 33 levels deep',
      JSON.stringify(spawnBody()).replace('"metadata":{"plan":"test"}', `"metadata":{"m":${'['.repeat(32)}${']'.repeat(32)}}`),
      /^metadata: nested more than 32 levels deep/,
    ],
  ])('answers 400 invalid_request for %s', async (_name, body, message) => {
    const res = await worker.spawnSession(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
    expect(String(res.body.message)).toMatch(message);
  });

  it('answers 413 payload_too_large above SPAWN_BODY_LIMIT_BYTES', async () => {
    const res = await worker.spawnSession(spawnBody({ metadata: { blob: 'x'.repeat(5000) } }));
    expect(res.status).toBe(413);
    expect(res.body.error).toBe('payload_too_large');
  });

  it('answers 405 for GET / and 404 JSON for unknown routes', async () => {
    const get = await call(`${worker.url}/`);
    expect(get.status).toBe(405);
    expect(JSON.parse(get.text).error).toBe('method_not_allowed');
    const unknown = await call(`${worker.url}/nope`);
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.text).error).toBe('not_found');
  });
});

describe('spawn idempotency and capacity', () => {
  it('answers the same room and token for a repeated sessionId and claims one slot only', async () => {
    const body = spawnBody();
    const first = await worker.spawnSession(body);
    const second = await worker.spawnSession(body);
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(first.body.sessionId).toBe(body.sessionId);
    // The answer names the room's transport (ROOM_PROVIDER), so the respondent's page need not guess it.
    expect(first.body.transport).toBe('local');
    expect(first.body.expiresAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    // One of the two warm slots is taken; a second bot was never started for the repeat.
    await waitIdleSlots(worker, 1, 3000);
    const metrics = await worker.metrics();
    expect(metrics).toMatch(/worker_spawns_total\{outcome="ok"\} 1/);
    expect(metrics).toMatch(/worker_spawns_total\{outcome="existing"\} 1/);
    expect(metrics).toMatch(/worker_active_sessions 1/);
  });

  it('answers 503 no_capacity with Retry-After once every slot is taken', async () => {
    const taken = await worker.spawnSession(spawnBody());
    expect(taken.status).toBe(200);
    const res = await worker.spawnSession(spawnBody());
    expect(res.status).toBe(503);
    expect(res.body.error).toBe('no_capacity');
    expect(res.headers['retry-after']).toBe('7');
    const metrics = await worker.metrics();
    expect(metrics).toMatch(/worker_spawns_total\{outcome="no_capacity"\} 1/);
    expect(metrics).toMatch(/worker_spawn_duration_seconds_count\{outcome="ok"\} 2/);
    await waitIdleSlots(worker, 0, 3000);
  });

  it('fails a claimed session whose respondent never joins, reports it, and frees the slot', async () => {
    // JOIN_TIMEOUT_SECONDS is 3 here; the two sessions above were never joined.
    const failed = () => backend.reports.filter((r) => r.body.status === 'failed');
    await waitFor(() => failed().length >= 2, { timeoutMs: 20_000, what: 'two failed reports' });
    expect(failed().every((r) => r.body.reason === 'respondent_absent')).toBe(true);
    await waitIdleSlots(worker, 2, 10_000);
  }, 30_000);
});

describe('spawn after a failure', () => {
  it('claims a fresh slot and room for a session whose bot failed (the respondent retries), and is idempotent again after', async () => {
    const body = spawnBody();
    const first = await worker.spawnSession(body);
    expect(first.status).toBe(200);
    // Nobody joins: JOIN_TIMEOUT_SECONDS (3 s) fails the session and its slot goes back to the pool.
    const report = await backend.waitForReport(String(body.sessionId), 20_000);
    expect(report.body.status).toBe('failed');
    // The report echoes the service's attempt from the spawn body (0 when the body had none).
    expect((report.body as { attempt?: number }).attempt).toBe(0);
    await waitIdleSlots(worker, 2, 10_000);
    const retry = await worker.spawnSession({ ...body, attempt: 1 });
    expect(retry.status).toBe(200);
    expect(retry.body.room_url).not.toBe(first.body.room_url);
    expect(retry.body.token).not.toBe(first.body.token);
    const repeat = await worker.spawnSession({ ...body, attempt: 1 });
    expect(repeat.body).toEqual(retry.body);
    // Nobody joins the retry either: it fails too, and its report carries attempt 1.
    const reportsOf = () => backend.reports.filter((r) => r.sessionId === body.sessionId);
    await waitFor(() => reportsOf().length === 2, { timeoutMs: 20_000, what: 'the report of the retry attempt' });
    expect(reportsOf().map((r) => (r.body as { attempt?: number }).attempt)).toEqual([0, 1]);
    await waitIdleSlots(worker, 2, 10_000);
  }, 40_000);
});

describe('probes', () => {
  it('answers /healthz, /readyz and /metrics on the management port only (METRICS_PORT), never on the public port', async () => {
    expect((await call(`${worker.metricsUrl}/healthz`)).status).toBe(200);
    const ready = await call(`${worker.metricsUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.text)).toEqual({ status: 'ready' });
    expect((await call(`${worker.metricsUrl}/metrics`)).text).toMatch(/^worker_idle_slots \d+$/m);
    for (const path of ['/healthz', '/readyz', '/metrics']) {
      const res = await call(`${worker.url}${path}`);
      expect(res.status, path).toBe(404);
      expect(JSON.parse(res.text)).toMatchObject({ error: 'not_found' });
    }
    // The management port serves nothing else: no spawn there.
    expect(
      (await call(`${worker.metricsUrl}/`, { method: 'POST', headers: { authorization: `Bearer ${WORKER_TOKEN}` }, body: '{}' })).status,
    ).toBe(404);
  });
});

describe('session.start spans', () => {
  it('exports one per spawn over OTLP/HTTP JSON, with its outcome and never a secret', async () => {
    await otlp.waitFor(
      (spans) =>
        ['ok', 'existing', 'no_capacity', 'bad_request'].every((o) =>
          spans.some((s) => s.name === 'session.start' && s.attributes['spawn.outcome'] === o),
        ),
      10_000,
      'session.start spans of every outcome',
    );
    expect(otlp.contentTypes.every((t) => t.includes('json'))).toBe(true);
    const ok = otlp.spans.find((s) => s.name === 'session.start' && s.attributes['spawn.outcome'] === 'ok')!;
    expect(ok.attributes).toMatchObject({ 'room.provider': 'local', 'interview.id': 'dpl_test1' });
    expect(String(ok.attributes['session.id'])).toMatch(/^inv_/);
    expect(String(ok.attributes['worker.slot.id'])).toMatch(/^pod-\d+~[0-9a-f]{8}\/[01]$/);
    expect(Number(ok.endNs - ok.startNs) / 1e6).toBeLessThan(1000); // within SPAWN_BUDGET_MS's default (a loaded machine is slower than 200 ms)
    expect(JSON.stringify(otlp.spans.map((s) => s.attributes))).not.toContain(WORKER_TOKEN);
  });
});
