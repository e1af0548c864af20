import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSpeechServer, type SpeechServerHandle } from '../harness/speech-server.ts';

/**
 * Realtime events are parsed with schemas (speech/realtime-events.ts): an event whose fields hold
 * objects with prototype-like keys (`toString`, `valueOf`, `__proto__`, `constructor`) where strings
 * belong is answered with an `error` event and the session goes on. Before the schemas,
 * `{"type":{"toString":1}}` made `String(event.type)` throw and the process exit 70 (issue 41).
 */
let server: SpeechServerHandle;

beforeAll(async () => {
  server = await startSpeechServer({}, join(mkdtempSync(join(tmpdir(), 'realtime-schema-')), 'logs'));
}, 300_000);

afterAll(async () => {
  await server?.stop();
});

interface ServerEvent {
  type: string;
  error?: { code: string; param: string | null; event_id: string | null };
}

/** A realtime session whose events arrive in a list; `next()` waits for the next one. */
async function openSession(): Promise<{ ws: WebSocket; next: () => Promise<ServerEvent> }> {
  const ws = new WebSocket(`${server.url.replace('http', 'ws')}/realtime?intent=transcription`, {
    headers: { authorization: `Bearer ${server.token}` },
  });
  const events: ServerEvent[] = [];
  ws.on('message', (d) => events.push(JSON.parse(d.toString()) as ServerEvent));
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  const next = async () => {
    const deadline = Date.now() + 30_000;
    while (events.length === 0) {
      if (Date.now() > deadline || ws.readyState !== ws.OPEN)
        throw new Error(`no event from the server (socket state ${ws.readyState}): ${server.process.output().slice(-1500)}`);
      await new Promise((r) => setTimeout(r, 5));
    }
    return events.shift()!;
  };
  expect((await next()).type).toBe('session.created');
  return { ws, next };
}

async function expectAlive(): Promise<void> {
  expect(server.process.proc.exitCode, server.process.output().slice(-2000)).toBeNull();
  expect((await fetch(server.metricsUrl.replace('/metrics', '/healthz'))).status).toBe(200);
}

const PROTO_KEYS = ['__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty', 'toJSON'] as const;
const TYPES = ['session.update', 'input_audio_buffer.append', 'input_audio_buffer.commit', 'input_audio_buffer.clear'] as const;

/**
 * JSON text written by hand: JSON.stringify of a JavaScript object cannot hold an own `__proto__`
 * key, and the point is that the server's JSON.parse makes one.
 */
type Json = { kind: 'value'; text: string } | { kind: 'object'; entries: Array<[string, Json]> } | { kind: 'array'; items: Json[] };
const text = (j: Json): string =>
  j.kind === 'value'
    ? j.text
    : j.kind === 'array'
      ? `[${j.items.map(text).join(',')}]`
      : `{${j.entries.map(([k, v]) => `${JSON.stringify(k)}:${text(v)}`).join(',')}}`;

const primitive = fc
  .oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.string({ maxLength: 6 }))
  .map((v): Json => ({ kind: 'value', text: JSON.stringify(v) }));
/** Non-primitive values whose keys are the ones String(), `+`, templates and `in` look up. */
const { hostile } = fc.letrec<{ hostile: Json; any: Json }>((tie) => ({
  hostile: fc.oneof(
    { maxDepth: 3 },
    fc
      .array(fc.tuple(fc.constantFrom(...PROTO_KEYS, 'type', 'model'), tie('any')), { minLength: 1, maxLength: 3 })
      .map((entries): Json => ({ kind: 'object', entries })),
    fc.array(tie('any'), { maxLength: 3 }).map((items): Json => ({ kind: 'array', items })),
  ),
  any: fc.oneof({ maxDepth: 3 }, primitive, tie('hostile')),
}));

/** An event: a known type (or a hostile one) and every other field hostile. */
const hostileEvent = fc
  .record({
    type: fc.oneof(
      fc.constantFrom(...TYPES).map((t): Json => ({ kind: 'value', text: JSON.stringify(t) })),
      hostile,
    ),
    extra: fc.array(fc.tuple(fc.constantFrom(...PROTO_KEYS, 'event_id', 'session', 'audio'), hostile), { maxLength: 4 }),
  })
  .map(({ type, extra }) => {
    // session.update always carries a hostile session (a valid one is not the point here).
    const session: Array<[string, Json]> =
      type.kind === 'value' && type.text === '"session.update"'
        ? [['session', { kind: 'object', entries: [['type', { kind: 'object', entries: [['toString', { kind: 'value', text: '1' }]] }]] }]]
        : [];
    return {
      knownType: type.kind === 'value' ? (JSON.parse(type.text) as string) : null,
      raw: text({ kind: 'object', entries: [['type', type], ...session, ...extra] }),
    };
  });

describe('realtime events with prototype-like keys and non-primitive values', () => {
  it('the events that killed the process get an invalid_value error, and the session goes on', async () => {
    const { ws, next } = await openSession();
    for (const raw of [
      '{"type":{"toString":1}}',
      '{"toString":{}}',
      '{"valueOf":1,"toString":1}',
      '{"type":{"valueOf":{},"toString":{}}}',
      '{"type":["a"],"event_id":{"toString":1}}',
    ]) {
      ws.send(raw);
      const answer = await next();
      expect(answer.type, raw).toBe('error');
      expect(answer.error, raw).toMatchObject({ code: 'invalid_value', param: 'type', event_id: null });
    }
    ws.send(
      JSON.stringify({
        type: 'session.update',
        session: { type: 'transcription', audio: { input: { transcription: { model: { toString: 1 } } } } },
      }),
    );
    expect((await next()).error).toMatchObject({ code: 'invalid_value', param: 'session.audio.input.transcription.model' });
    ws.send(
      JSON.stringify({
        type: 'session.update',
        event_id: 'e1',
        session: {
          type: 'transcription',
          audio: { input: { format: { type: 'audio/pcm', rate: 24_000 }, transcription: { model: 'm' }, turn_detection: null } },
        },
      }),
    );
    expect((await next()).type).toBe('session.updated');
    ws.close();
    await expectAlive();
  }, 120_000);

  it('fuzz: every hostile event is answered with one event (an error unless it is a bare clear), the server stays up', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(hostileEvent, { minLength: 1, maxLength: 8 }), async (events) => {
        const { ws, next } = await openSession();
        for (const { knownType, raw } of events) {
          ws.send(raw);
          const answer = await next();
          if (knownType === 'input_audio_buffer.clear') {
            expect(answer.type, raw).toBe('input_audio_buffer.cleared');
            continue;
          }
          expect(answer.type, raw).toBe('error');
          if (knownType === null) expect(answer.error, raw).toMatchObject({ code: 'invalid_value', param: 'type' });
          else expect(typeof answer.error?.code, raw).toBe('string');
        }
        ws.close();
      }),
      { numRuns: 60 },
    );
    await expectAlive();
    // And a whole session still works afterwards.
    const { ws, next } = await openSession();
    ws.send(
      JSON.stringify({ type: 'session.update', session: { type: 'transcription', audio: { input: { transcription: { model: 'm' } } } } }),
    );
    expect((await next()).type).toBe('session.updated');
    ws.close();
  }, 300_000);
});
