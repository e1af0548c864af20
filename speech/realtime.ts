import { randomBytes } from 'node:crypto';
import type { WebSocket } from 'ws';
import type { Logger } from '../lib/log.ts';
import { SpeechError } from './errors.ts';
import { JobAbortedError } from './fair-queue.ts';
import type { SpeechMetrics } from './metrics.ts';
import { RealtimeBuffer, type RealtimeDecode } from './realtime-buffer.ts';
import type { SpeechService } from './service.ts';

/**
 * One realtime transcription session (OpenAI's GA Realtime API, `intent=transcription`), as the
 * bot's client (worker/providers/realtime-*.ts) uses it: `session.update` (PCM16 at 24 kHz, a
 * transcription model, no server turn detection) -> `session.updated`; `input_audio_buffer.append`
 * (base64 PCM16) fills the buffer; `...commit` -> `...committed` and `conversation.item.added` at
 * once, then, when the recogniser has decoded the buffer, the text as one `...delta` and
 * `...completed`; `...clear` -> `...cleared`. Moonshine has no streaming decode: the buffer is
 * decoded in pieces cut at pauses while it fills (realtime-buffer.ts), but the text is sent only
 * at the commit, as one delta, so that a client sees the same events whichever way it was decoded. Every mistake of the client is an `error` event naming its event and
 * the session goes on; a full queue fails that item (`...transcription.failed`, server_overloaded),
 * which makes the bot transcribe the turn in batch. Clients idle (nothing sent, no transcript owed) or
 * no longer reading are closed.
 */
export const SESSION_RATE = 24_000;
const MIN_COMMIT_MS = 100;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** Events we send that a client has not read beyond this mean it stopped reading. */
const MAX_UNREAD_BYTES = 1024 * 1024;

export interface RealtimeOptions {
  service: SpeechService;
  metrics: SpeechMetrics;
  log: Logger;
  maxAudioSeconds: number;
  idleTimeoutMs: number;
  decode: RealtimeDecode;
  splitPauseMs: number;
  splitMaxPieceSeconds: number;
  earlyTailMs: number;
}

/** A piece shorter than this is not cut off: a decode needs context, and short ones are padded to a second anyway. */
const MIN_PIECE_MS = 1000;

type Incoming = Record<string, unknown> & { type?: unknown; event_id?: unknown };

const newId = (prefix: string) => `${prefix}_${randomBytes(9).toString('base64url')}`;

interface SessionState {
  id: string;
  object: 'realtime.transcription_session';
  type: 'transcription';
  audio: { input: { format: { type: 'audio/pcm'; rate: number }; transcription: { model: string; language?: string } | null; turn_detection: null; noise_reduction: null } };
  include: null;
}

export function serveRealtimeSession(ws: WebSocket, options: RealtimeOptions): void {
  const { service, metrics } = options;
  const session: SessionState = {
    id: newId('sess'), object: 'realtime.transcription_session', type: 'transcription', include: null,
    audio: { input: { format: { type: 'audio/pcm', rate: SESSION_RATE }, transcription: null, turn_detection: null, noise_reduction: null } },
  };
  const closing = new AbortController();
  const maxBytes = Math.floor(options.maxAudioSeconds * SESSION_RATE) * 2;
  const buffer = new RealtimeBuffer({
    service, metrics, session: session.id, rate: SESSION_RATE, decode: options.decode, closing: closing.signal,
    split: { pauseMs: options.splitPauseMs, minPieceMs: MIN_PIECE_MS, maxPieceMs: options.splitMaxPieceSeconds * 1000, earlyMs: options.earlyTailMs },
  });
  let previousItem: string | null = null;
  metrics.sessions.inc();

  const send = (event: Record<string, unknown>) => {
    if (ws.readyState !== ws.OPEN) return;
    if (ws.bufferedAmount > MAX_UNREAD_BYTES) {
      ws.terminate(); // the client stopped reading; its transcripts would only pile up here
      return;
    }
    ws.send(JSON.stringify({ event_id: newId('event'), ...event }));
  };
  const error = (code: string, message: string, clientEventId: unknown, param: string | null = null, type = 'invalid_request_error') =>
    send({ type: 'error', error: { type, code, message, param, event_id: typeof clientEventId === 'string' ? clientEventId.slice(0, 128) : null } });

  // Idle means neither side has anything coming: a client that committed and waits for its
  // transcripts is not idle however long the queue takes, and its idle time starts again at the
  // last transcript the server sent.
  let idle: NodeJS.Timeout | undefined;
  let owed = 0;
  const touch = () => {
    clearTimeout(idle);
    if (ws.readyState !== ws.OPEN) return;
    idle = setTimeout(() => {
      if (owed > 0) return touch();
      error('session_idle', `No events for ${options.idleTimeoutMs / 1000} s; the session is closed.`, null);
      ws.close(1000, 'idle');
    }, options.idleTimeoutMs);
  };
  touch();

  const update = (event: Incoming) => {
    const next = event.session as { type?: unknown; audio?: { input?: Record<string, unknown> } } | undefined;
    if (!next || typeof next !== 'object' || next.type !== 'transcription') {
      return error('invalid_request_error', 'session.update needs session.type "transcription" (this server serves transcription sessions only).', event.event_id, 'session.type');
    }
    const input = next.audio?.input ?? {};
    if (typeof input !== 'object' || input === null) return error('invalid_value', 'session.audio.input must be an object.', event.event_id, 'session.audio.input');
    const format = input.format as { type?: unknown; rate?: unknown } | undefined;
    if (format !== undefined) {
      if (format === null || typeof format !== 'object' || format.type !== 'audio/pcm') return error('invalid_value', "Only 'audio/pcm' (16-bit, 24 kHz, mono) is supported.", event.event_id, 'session.audio.input.format.type');
      if (format.rate !== undefined && format.rate !== SESSION_RATE) return error('invalid_value', `Invalid value: ${JSON.stringify(format.rate)}. Only 24000 is supported.`, event.event_id, 'session.audio.input.format.rate');
    }
    if (input.turn_detection !== undefined && input.turn_detection !== null) {
      return error('invalid_value', 'Server turn detection is not supported here: send turn_detection null and commit the buffer yourself.', event.event_id, 'session.audio.input.turn_detection');
    }
    if ('transcription' in input) {
      const t = input.transcription as { model?: unknown; language?: unknown } | null;
      if (t === null) session.audio.input.transcription = null;
      else if (typeof t !== 'object' || typeof t.model !== 'string' || t.model.trim() === '') return error('invalid_value', 'session.audio.input.transcription needs a model.', event.event_id, 'session.audio.input.transcription.model');
      else if (t.language !== undefined && (typeof t.language !== 'string' || !/^en(-[A-Za-z]{2})?$/i.test(t.language))) return error('unsupported_language', 'This server recognises English only (language en).', event.event_id, 'session.audio.input.transcription.language');
      else session.audio.input.transcription = { model: t.model.slice(0, 200), ...(typeof t.language === 'string' ? { language: t.language } : {}) };
    }
    send({ type: 'session.updated', session });
  };

  const append = (event: Incoming) => {
    const audio = event.audio;
    if (typeof audio !== 'string' || !BASE64.test(audio)) return error('invalid_value', "Invalid 'audio'. Expected base64-encoded audio bytes.", event.event_id, 'audio');
    const pcm = Buffer.from(audio, 'base64');
    if (pcm.length % 2 !== 0) return error('invalid_value', "Invalid 'audio'. PCM16 audio must have an even number of bytes.", event.event_id, 'audio');
    if (buffer.bytes + pcm.length > maxBytes) return error('input_audio_buffer_too_large', `The buffer would exceed ${options.maxAudioSeconds} s of audio; commit or clear it first.`, event.event_id, 'audio');
    buffer.append(pcm);
  };

  const commit = (event: Incoming) => {
    const ms = (buffer.bytes / 2 / SESSION_RATE) * 1000;
    if (ms < MIN_COMMIT_MS) return error('input_audio_buffer_commit_empty', `Error committing input audio buffer: buffer too small. Expected at least ${MIN_COMMIT_MS}ms of audio, but buffer only has ${ms.toFixed(2)}ms of audio.`, event.event_id);
    if (!session.audio.input.transcription) return error('invalid_request_error', 'Input audio transcription is not configured for this session (session.update with audio.input.transcription).', event.event_id, 'session.audio.input.transcription');
    const transcript = buffer.commit().finally(() => {
      owed--;
      touch();
    });
    owed++;
    const itemId = newId('item');
    send({ type: 'input_audio_buffer.committed', previous_item_id: previousItem, item_id: itemId });
    previousItem = itemId;
    send({ type: 'conversation.item.added', previous_item_id: null, item: { id: itemId, object: 'realtime.item', type: 'message', status: 'completed', role: 'user', content: [{ type: 'input_audio', transcript: null }] } });
    transcript.then(
      (text) => {
        metrics.requests.inc({ endpoint: 'realtime', outcome: 'ok' });
        if (text) send({ type: 'conversation.item.input_audio_transcription.delta', item_id: itemId, content_index: 0, delta: text });
        send({ type: 'conversation.item.input_audio_transcription.completed', item_id: itemId, content_index: 0, transcript: text, usage: { type: 'duration', seconds: Math.ceil(ms / 1000) } });
        send({ type: 'conversation.item.done', previous_item_id: null, item: { id: itemId, object: 'realtime.item', type: 'message', status: 'completed', role: 'user', content: [{ type: 'input_audio', transcript: text }] } });
      },
      (err: unknown) => {
        if (err instanceof JobAbortedError) return;
        const failure = err instanceof SpeechError ? err : new SpeechError(500, 'internal_error', 'The transcription failed.');
        metrics.requests.inc({ endpoint: 'realtime', outcome: String(failure.status) });
        send({ type: 'conversation.item.input_audio_transcription.failed', item_id: itemId, content_index: 0, error: { type: failure.type, code: failure.code, message: failure.message, param: null } });
      },
    );
  };

  ws.on('message', (data, isBinary) => {
    touch();
    let event: Incoming;
    try {
      if (isBinary) throw new Error('binary');
      event = JSON.parse(data.toString()) as Incoming;
      if (event === null || typeof event !== 'object' || Array.isArray(event)) throw new Error('not an object');
    } catch {
      return error('invalid_json', 'The server could not parse the event: expected a JSON object in a text frame.', null);
    }
    switch (event.type) {
      case 'session.update':
        return update(event);
      case 'input_audio_buffer.append':
        return append(event);
      case 'input_audio_buffer.commit':
        return commit(event);
      case 'input_audio_buffer.clear':
        buffer.clear();
        return send({ type: 'input_audio_buffer.cleared' });
      default:
        return error('invalid_value', `Invalid value: ${JSON.stringify(String(event.type)).slice(0, 80)}. This server accepts session.update and input_audio_buffer.append, commit and clear.`, event.event_id, 'type');
    }
  });
  ws.on('error', () => undefined); // 'close' follows
  ws.on('close', () => {
    clearTimeout(idle);
    closing.abort(); // queued commits and pieces of a gone session are dropped, not decoded
    metrics.sessions.dec();
  });
  send({ type: 'session.created', session });
}
