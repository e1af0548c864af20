import { STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { RealtimeServerEvent } from 'openai/resources/realtime/realtime';
import { wavFromPcm16 } from '../../lib/pcm.ts';
import { withField, wrongBody, type FaultPicker } from './malformed.ts';

/**
 * The realtime transcription endpoint of the OpenAI stand-in (`/v1/realtime?intent=transcription`,
 * WebSocket, GA protocol), attached to the fake's HTTP server. It checks the bearer key at the
 * upgrade (401 otherwise), greets with `session.created`, answers `session.update` with
 * `session.updated`, decodes base64 audio at the session's format (bad base64 or a PCM16 payload
 * of odd length: an `error` event, as the API does), and on commit sends `committed`, then the
 * transcript as deltas and `completed`. Less than 100 ms of audio cannot be committed (the API's
 * error). It never commits on its own: server VAD is not implemented, whatever turn_detection says.
 */
export interface RealtimeFailure {
  /** Refuse the upgrade with this HTTP status. */
  status?: number;
  /** Commit, but never complete the transcription. */
  hang?: boolean;
  /** At the commit: answer an `error` event (server_error), commit and send `...transcription.failed`, or drop the connection. */
  event?: 'error' | 'failed' | 'close';
}

export interface RealtimeHooks {
  apiKey: string | undefined;
  /** False: the provider has no realtime endpoint, every upgrade gets 404. */
  enabled: () => boolean;
  /** The next injected failure, consumed only if it applies at this stage. */
  failure: (stage: 'upgrade' | 'commit') => RealtimeFailure | undefined;
  onConnect: () => void;
  onAppend: () => void;
  /**
   * Logs the commit like a batch request and gives its transcript (the shared script, else what a
   * real recogniser heard in `wav`, else "answer <n> ..."). A rejection fails the transcription.
   */
  transcribe: (
    entry: { model: string; language?: string; audioSeconds: number; authorization: string | undefined },
    wav: Buffer | undefined,
  ) => Promise<string>;
  /** Keep the committed audio and pass it to `transcribe` as a WAV (a real recogniser listens). */
  wantsAudio: boolean;
  /** Commit -> `completed`, at the earliest. */
  completionDelayMs: (audioSeconds: number) => number;
  /** The transcript the next commit will get, if scripted (for deltas while the audio arrives). */
  peekTranscript: () => string | undefined;
  /** While audio arrives, one word of the coming (scripted) transcript per this much audio; null: deltas only after the commit. */
  interimEveryMs: () => number | null;
  /** Fault mode: some commits are answered with malformed or out-of-order events (malformed.ts). */
  malformed?: FaultPicker;
}

type Session = {
  type: 'transcription';
  audio: {
    input: {
      format: { type: string; rate?: number };
      transcription: { model?: string; language?: string } | null;
      turn_detection: unknown;
      noise_reduction: unknown;
    };
  };
  include: unknown;
  id: string;
  object: string;
};
type Incoming = {
  type?: unknown;
  event_id?: unknown;
  audio?: unknown;
  session?: Partial<Session> & { audio?: { input?: Partial<Session['audio']['input']> } };
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
let serial = 0;
const id = (prefix: string) => `${prefix}_fake${(++serial).toString(36).padStart(6, '0')}`;

function refuse(socket: Duplex, status: number, message: string, code: string): void {
  const body = JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code } });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\ncontent-type: application/json\r\ncontent-length: ` +
      `${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

export function attachRealtime(server: Server, hooks: RealtimeHooks): { close: () => void } {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    if (url.pathname !== '/v1/realtime' || !hooks.enabled()) return refuse(socket, 404, `Unknown route GET ${url.pathname}`, 'unknown_url');
    if (hooks.apiKey && req.headers.authorization !== `Bearer ${hooks.apiKey}`)
      return refuse(socket, 401, 'Incorrect API key provided.', 'invalid_api_key');
    hooks.onConnect();
    const failure = hooks.failure('upgrade');
    if (failure?.status) return refuse(socket, failure.status, `Injected failure (${failure.status}).`, 'injected');
    if (url.searchParams.get('intent') !== 'transcription')
      return refuse(socket, 400, 'This stand-in serves transcription sessions only (intent=transcription).', 'invalid_request');
    wss.handleUpgrade(req, socket, head, (ws) => serve(ws, req.headers.authorization, hooks));
  });
  return {
    close: () => {
      for (const ws of wss.clients) ws.terminate();
      wss.close();
    },
  };
}

function serve(ws: WebSocket, authorization: string | undefined, hooks: RealtimeHooks): void {
  const session: Session = {
    type: 'transcription',
    id: id('sess'),
    object: 'realtime.transcription_session',
    include: null,
    audio: {
      input: {
        format: { type: 'audio/pcm', rate: 24_000 },
        transcription: null,
        turn_detection: { type: 'server_vad', threshold: 0.5, prefix_padding_ms: 300, silence_duration_ms: 500 },
        noise_reduction: null,
      },
    },
  };
  let bufferBytes = 0;
  let bufferAudio: Buffer[] = []; // kept only when a real recogniser listens (hooks.wantsAudio)
  // The item the buffer becomes when committed, and the words already sent as deltas while it filled.
  let bufferItem = id('item');
  let revealed: string[] = [];
  let previousItem: string | null = null;
  const send = (event: Record<string, unknown>) => {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ event_id: id('event'), ...event } as unknown as RealtimeServerEvent));
  };
  const error = (code: string, message: string, clientEventId: unknown, param: string | null = null, type = 'invalid_request_error') =>
    send({ type: 'error', error: { type, code, message, param, event_id: typeof clientEventId === 'string' ? clientEventId : null } });
  const bytesPerSecond = () => (session.audio.input.format.type === 'audio/pcm' ? 48_000 : 8000);

  const commit = async (eventId: unknown) => {
    const ms = (bufferBytes / bytesPerSecond()) * 1000;
    if (ms < 100)
      return error(
        'input_audio_buffer_commit_empty',
        `Error committing input audio buffer: buffer too small. Expected at least 100ms of audio, but buffer only has ${ms.toFixed(2)}ms of audio.`,
        eventId,
      );
    const model = session.audio.input.transcription?.model;
    if (!model)
      return error(
        'invalid_request_error',
        'Input audio transcription is not configured for this session.',
        eventId,
        'session.audio.input.transcription',
      );
    const failure = hooks.failure('commit');
    if (failure?.event === 'close') return void ws.terminate();
    if (failure?.event === 'error') return error('server_error', 'Injected failure.', eventId, null, 'server_error');
    const audioSeconds = ms / 1000;
    // Only PCM16 can go to the recogniser as a WAV; G.711 sessions keep the placeholder.
    const wav =
      hooks.wantsAudio && session.audio.input.format.type === 'audio/pcm' ? wavFromPcm16(Buffer.concat(bufferAudio), 24_000) : undefined;
    bufferBytes = 0;
    bufferAudio = [];
    const itemId = bufferItem;
    const early = revealed;
    bufferItem = id('item');
    revealed = [];
    const picker = hooks.malformed;
    if (picker?.strike()) {
      // The commit's own acknowledgement broken, or its events sent in the wrong order.
      const committed = { type: 'input_audio_buffer.committed', previous_item_id: previousItem, item_id: itemId };
      const completed = {
        type: 'conversation.item.input_audio_transcription.completed',
        item_id: itemId,
        content_index: 0,
        transcript: 'out of order',
      };
      if (picker.pick([true, false])) return send(withField(committed, 'item_id', picker.junk()));
      send(completed);
      return send(committed);
    }
    send({ type: 'input_audio_buffer.committed', previous_item_id: previousItem, item_id: itemId });
    previousItem = itemId;
    send({
      type: 'conversation.item.added',
      previous_item_id: null,
      item: {
        id: itemId,
        object: 'realtime.item',
        type: 'message',
        status: 'completed',
        role: 'user',
        content: [{ type: 'input_audio', transcript: null }],
      },
    });
    const language = session.audio.input.transcription?.language;
    const committedAt = performance.now();
    let transcript: string;
    try {
      transcript = await hooks.transcribe({ model, audioSeconds, authorization, ...(language ? { language } : {}) }, wav);
    } catch (err) {
      return send({
        type: 'conversation.item.input_audio_transcription.failed',
        item_id: itemId,
        content_index: 0,
        error: { type: 'transcription_error', code: 'upstream_recogniser', message: (err as Error).message, param: null },
      });
    }
    if (failure?.hang) return;
    if (hooks.malformed?.strike()) return malformedAnswer(hooks.malformed, itemId, transcript);
    if (failure?.event === 'failed')
      return send({
        type: 'conversation.item.input_audio_transcription.failed',
        item_id: itemId,
        content_index: 0,
        error: { type: 'transcription_error', code: 'injected', message: 'Injected failure.', param: null },
      });
    const all = transcript.match(/\S+\s*/g) ?? [];
    const words = early.every((w, i) => all[i] === w) ? all.slice(early.length) : all;
    // The profile's delay counts from the commit: a real recogniser's decode time is part of it.
    const left = Math.max(0, committedAt + hooks.completionDelayMs(audioSeconds) - performance.now());
    const step = left / (words.length + 1);
    for (const word of words) {
      await sleep(step);
      send({ type: 'conversation.item.input_audio_transcription.delta', item_id: itemId, content_index: 0, delta: word });
    }
    await sleep(step);
    send({
      type: 'conversation.item.input_audio_transcription.completed',
      item_id: itemId,
      content_index: 0,
      transcript,
      usage: { type: 'duration', seconds: Math.ceil(audioSeconds) },
    });
    send({
      type: 'conversation.item.done',
      previous_item_id: null,
      item: {
        id: itemId,
        object: 'realtime.item',
        type: 'message',
        status: 'completed',
        role: 'user',
        content: [{ type: 'input_audio', transcript }],
      },
    });
  };

  /** One malformed answer to a commit: a broken event of a type the client reads, junk, or a repeat. */
  const malformedAnswer = (picker: FaultPicker, itemId: string, transcript: string) => {
    const completed = { type: 'conversation.item.input_audio_transcription.completed', item_id: itemId, content_index: 0, transcript };
    switch (picker.pick(['completed', 'delta', 'failed', 'error', 'raw', 'twice'] as const)) {
      case 'completed':
        return send(withField(completed, picker.pick(['transcript', 'item_id']), picker.junk()));
      case 'delta':
        send({ type: 'conversation.item.input_audio_transcription.delta', item_id: itemId, content_index: 0, delta: picker.junk() });
        return send(completed);
      case 'failed':
        return send({
          type: 'conversation.item.input_audio_transcription.failed',
          item_id: itemId,
          content_index: 0,
          error: picker.junk(),
        });
      case 'error':
        return send(
          withField(
            { type: 'error', error: { type: 'server_error', code: 'x', message: 'x', event_id: null } },
            picker.pick(['error', 'error.type', 'error.event_id']),
            picker.junk(),
          ),
        );
      case 'raw':
        // Not an event object at all (event_id cannot be added to these).
        if (ws.readyState === ws.OPEN) ws.send(wrongBody(picker));
        return send(completed);
      case 'twice':
        send(completed);
        return send(completed);
    }
  };

  /** Deltas while the audio arrives (gpt-realtime-whisper style), for a bench's speculative work. */
  const interim = () => {
    const every = hooks.interimEveryMs();
    const coming = hooks.peekTranscript()?.match(/\S+\s*/g);
    if (!every || !coming) return;
    const due = Math.min(Math.floor(((bufferBytes / bytesPerSecond()) * 1000) / every), coming.length - 1); // the last word waits for the commit
    while (revealed.length < due) {
      const word = coming[revealed.length]!;
      revealed.push(word);
      send({ type: 'conversation.item.input_audio_transcription.delta', item_id: bufferItem, content_index: 0, delta: word });
    }
  };

  const update = (event: Incoming) => {
    const next = event.session;
    if (!next || next.type !== 'transcription')
      return error(
        'invalid_request_error',
        'Passing a realtime session update event to a transcription session is not allowed.',
        event.event_id,
        'session.type',
      );
    const input: Partial<Session['audio']['input']> = next.audio?.input ?? {};
    if (input.format) {
      const { type, rate } = input.format;
      if (!['audio/pcm', 'audio/pcmu', 'audio/pcma'].includes(type))
        return error(
          'invalid_value',
          `Invalid value: '${type}'. Supported values are: 'audio/pcm', 'audio/pcmu', and 'audio/pcma'.`,
          event.event_id,
          'session.audio.input.format.type',
        );
      if (type === 'audio/pcm' && rate !== undefined && rate !== 24_000)
        return error(
          'invalid_value',
          `Invalid value: ${rate}. Only 24000 is supported.`,
          event.event_id,
          'session.audio.input.format.rate',
        );
      session.audio.input.format = { type, ...(type === 'audio/pcm' ? { rate: 24_000 } : {}) };
    }
    if ('transcription' in input) session.audio.input.transcription = input.transcription ?? null;
    if ('turn_detection' in input) session.audio.input.turn_detection = input.turn_detection;
    if ('noise_reduction' in input) session.audio.input.noise_reduction = input.noise_reduction;
    send({ type: 'session.updated', session });
  };

  ws.on('message', (data, isBinary) => {
    let event: Incoming;
    try {
      if (isBinary) throw new Error('binary');
      event = JSON.parse(data.toString()) as Incoming;
    } catch {
      return error('invalid_json', 'The server could not parse the event: expected a JSON text frame.', null);
    }
    switch (event.type) {
      case 'session.update':
        return update(event);
      case 'input_audio_buffer.append': {
        hooks.onAppend();
        if (typeof event.audio !== 'string' || !BASE64.test(event.audio))
          return error('invalid_value', "Invalid 'audio'. Expected base64-encoded audio bytes.", event.event_id, 'audio');
        const bytes = Buffer.byteLength(event.audio, 'base64');
        if (session.audio.input.format.type === 'audio/pcm' && bytes % 2 !== 0)
          return error('invalid_value', "Invalid 'audio'. PCM16 audio must have an even number of bytes.", event.event_id, 'audio');
        bufferBytes += bytes;
        if (hooks.wantsAudio) bufferAudio.push(Buffer.from(event.audio, 'base64'));
        interim();
        return;
      }
      case 'input_audio_buffer.commit':
        return void commit(event.event_id);
      case 'input_audio_buffer.clear':
        bufferBytes = 0;
        bufferAudio = [];
        bufferItem = id('item');
        revealed = [];
        return send({ type: 'input_audio_buffer.cleared' });
      default:
        return error(
          'invalid_value',
          `Invalid value: '${String(event.type)}'. This stand-in accepts session.update and input_audio_buffer.append, commit and clear.`,
          event.event_id,
          'type',
        );
    }
  });
  send({ type: 'session.created', session });
}
