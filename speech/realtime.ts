import { randomBytes } from 'node:crypto';
import type { WebSocket } from 'ws';
import type { Logger } from '../lib/log.ts';
import { SpeechError } from './errors.ts';
import { JobAbortedError } from './fair-queue.ts';
import type { SpeechMetrics } from './metrics.ts';
import { RealtimeBuffer, type RealtimeDecode } from './realtime-buffer.ts';
import { isMistake, parseClientEvent, SESSION_RATE, type ClientEvent } from './realtime-events.ts';
import type { SpeechService } from './service.ts';

/**
 * One realtime transcription session (OpenAI's GA Realtime API, `intent=transcription`), as the
 * bot's client (worker/providers/realtime-*.ts) uses it: `session.update` (PCM16 at 24 kHz, a
 * transcription model, no server turn detection) -> `session.updated`; `input_audio_buffer.append`
 * (base64 PCM16) fills the buffer; `...commit` -> `...committed` and `conversation.item.added` at
 * once, then, when the recogniser has decoded the buffer, the text as one `...delta` and
 * `...completed`; `...clear` -> `...cleared`. Moonshine has no streaming decode: the buffer is
 * decoded in pieces cut at pauses while it fills (realtime-buffer.ts), but the text is sent only
 * at the commit, as one delta, so that a client sees the same events whichever way it was decoded. Every mistake of the
 * client is an `error` event naming its event and
 * the session goes on; a full queue fails that item (`...transcription.failed`, server_overloaded),
 * which makes the bot transcribe the turn in batch. Clients idle (nothing sent, no transcript owed) or
 * no longer reading are closed.
 */
const MIN_COMMIT_MS = 100;
/** Events we send that a client has not read beyond this mean it stopped reading. */
const MAX_UNREAD_BYTES = 1024 * 1024;

export interface RealtimeOptions {
  service: SpeechService;
  /** The queue's fairness key (the caller's address). */
  client: string;
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

const newId = (prefix: string) => `${prefix}_${randomBytes(9).toString('base64url')}`;

interface SessionState {
  id: string;
  object: 'realtime.transcription_session';
  type: 'transcription';
  audio: {
    input: {
      format: { type: 'audio/pcm'; rate: number };
      transcription: { model: string; language?: string } | null;
      turn_detection: null;
      noise_reduction: null;
    };
  };
  include: null;
}

export function serveRealtimeSession(ws: WebSocket, options: RealtimeOptions): void {
  const { service, metrics } = options;
  const session: SessionState = {
    id: newId('sess'),
    object: 'realtime.transcription_session',
    type: 'transcription',
    include: null,
    audio: {
      input: { format: { type: 'audio/pcm', rate: SESSION_RATE }, transcription: null, turn_detection: null, noise_reduction: null },
    },
  };
  const closing = new AbortController();
  const maxBytes = Math.floor(options.maxAudioSeconds * SESSION_RATE) * 2;
  const buffer = new RealtimeBuffer({
    service,
    metrics,
    session: session.id,
    client: options.client,
    rate: SESSION_RATE,
    decode: options.decode,
    closing: closing.signal,
    split: {
      pauseMs: options.splitPauseMs,
      minPieceMs: MIN_PIECE_MS,
      maxPieceMs: options.splitMaxPieceSeconds * 1000,
      earlyMs: options.earlyTailMs,
    },
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
  const error = (
    code: string,
    message: string,
    clientEventId: string | null,
    param: string | null = null,
    type = 'invalid_request_error',
  ) => send({ type: 'error', error: { type, code, message, param, event_id: clientEventId } });

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

  const update = (event: ClientEvent & { type: 'session.update' }) => {
    const input = event.session.audio?.input;
    if (input && 'transcription' in input) {
      const t = input.transcription;
      session.audio.input.transcription = t
        ? { model: t.model.slice(0, 200), ...(t.language !== undefined ? { language: t.language } : {}) }
        : null;
    }
    send({ type: 'session.updated', session });
  };

  const append = (event: ClientEvent & { type: 'input_audio_buffer.append' }) => {
    const pcm = Buffer.from(event.audio, 'base64');
    if (pcm.length % 2 !== 0)
      return error('invalid_value', "Invalid 'audio'. PCM16 audio must have an even number of bytes.", event.eventId, 'audio');
    if (buffer.bytes + pcm.length > maxBytes)
      return error(
        'input_audio_buffer_too_large',
        `The buffer would exceed ${options.maxAudioSeconds} s of audio; commit or clear it first.`,
        event.eventId,
        'audio',
      );
    buffer.append(pcm);
  };

  const commit = (event: ClientEvent) => {
    const ms = (buffer.bytes / 2 / SESSION_RATE) * 1000;
    if (ms < MIN_COMMIT_MS)
      return error(
        'input_audio_buffer_commit_empty',
        `Error committing input audio buffer: buffer too small. Expected at least ${MIN_COMMIT_MS}ms of audio, but ` +
          `buffer only has ${ms.toFixed(2)}ms of audio.`,
        event.eventId,
      );
    if (!session.audio.input.transcription)
      return error(
        'invalid_request_error',
        'Input audio transcription is not configured for this session (session.update with audio.input.transcription).',
        event.eventId,
        'session.audio.input.transcription',
      );
    const transcript = buffer.commit().finally(() => {
      owed--;
      touch();
    });
    owed++;
    const itemId = newId('item');
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
    transcript.then(
      (text) => {
        metrics.requests.inc({ endpoint: 'realtime', outcome: 'ok' });
        if (text) send({ type: 'conversation.item.input_audio_transcription.delta', item_id: itemId, content_index: 0, delta: text });
        send({
          type: 'conversation.item.input_audio_transcription.completed',
          item_id: itemId,
          content_index: 0,
          transcript: text,
          usage: { type: 'duration', seconds: Math.ceil(ms / 1000) },
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
            content: [{ type: 'input_audio', transcript: text }],
          },
        });
      },
      (err: unknown) => {
        if (err instanceof JobAbortedError) return;
        const failure = err instanceof SpeechError ? err : new SpeechError(500, 'internal_error', 'The transcription failed.');
        metrics.requests.inc({ endpoint: 'realtime', outcome: String(failure.status) });
        send({
          type: 'conversation.item.input_audio_transcription.failed',
          item_id: itemId,
          content_index: 0,
          error: { type: failure.type, code: failure.code, message: failure.message, param: null },
        });
      },
    );
  };

  ws.on('message', (data, isBinary) => {
    touch();
    let json: unknown;
    try {
      if (isBinary) throw new Error('binary');
      json = JSON.parse(data.toString());
    } catch {
      return error('invalid_json', 'The server could not parse the event: expected a JSON object in a text frame.', null);
    }
    const event = parseClientEvent(json);
    if (isMistake(event)) return error(event.code, event.message, event.eventId, event.param);
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
