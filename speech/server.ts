import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { STATUS_CODES } from 'node:http';
import { WebSocketServer } from 'ws';
import { capConnections, serverTimeoutOptions } from '../lib/listen-limits.ts';
import type { Logger } from '../lib/log.ts';
import type { SpeechConfig } from './config.ts';
import { internalError, SpeechError } from './errors.ts';
import { JobAbortedError } from './fair-queue.ts';
import { admit, BodyBudget, declaredLength, MAX_BODY_BYTES_IN_FLIGHT } from './admission.ts';
import { MAX_INPUT_RATE } from './audio.ts';
import { bearerMatches, sendError, unauthorized } from './http-io.ts';
import type { SpeechMetrics } from './metrics.ts';
import { serveRealtimeSession } from './realtime.ts';
import type { SpeechService } from './service.ts';
import { handleSpeech, SPEECH_BODY_LIMIT } from './synthesis.ts';
import { handleTranscription } from './transcriptions.ts';

/**
 * The public port: the OpenAI-compatible routes under /v1 (docs/speech.md, "API"), each behind
 * the bearer token. The queues are fair between callers' addresses, and within one between its
 * connections (a bot keeps one alive) and realtime sessions. A request is admitted or refused on
 * its headers, before its body is read (admission.ts). Every failure is answered in the OpenAI error shape; a fault
 * of ours is logged and answered 500 without detail. A client that sends a request too slowly is answered 408 (SPEECH_REQUEST_TIMEOUT_SECONDS).
 */
export interface SpeechServerDeps {
  config: SpeechConfig;
  service: SpeechService;
  metrics: SpeechMetrics;
  log: Logger;
}

const MAX_WS_MESSAGE_BYTES = 1024 * 1024;
/** A refused request's body up to this size is read and dropped before the answer; a larger one is never read. */
const MAX_DRAINED_BODY_BYTES = 1024 * 1024;
const MAX_CHANNELS = 8;

/** The fairness key of the queues: the caller's address (every client holds the same token), not its connection. */
const clientOf = (req: IncomingMessage): string => req.socket.remoteAddress ?? 'unknown';

export function createSpeechServer(deps: SpeechServerDeps): { server: Server; closeSessions: () => void } {
  const { config, service, metrics, log } = deps;
  const connectionIds = new WeakMap<Socket, string>();
  let nextConnection = 0;
  const sessionOf = (socket: Socket) => {
    let id = connectionIds.get(socket);
    if (!id) connectionIds.set(socket, (id = `conn-${++nextConnection}`));
    return id;
  };
  // The largest upload documented as valid (8 channels, 48 kHz, 16-bit, the longest audio), plus the form's own bytes.
  const maxBodyBytes = Math.ceil(config.maxAudioSeconds * MAX_INPUT_RATE * MAX_CHANNELS * 2) + 64 * 1024;
  const budget = new BodyBudget(MAX_BODY_BYTES_IN_FLIGHT);

  const handle = async (req: IncomingMessage, res: ServerResponse, signal: AbortSignal): Promise<string> => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const route = path === '/v1/audio/transcriptions' ? 'transcriptions' : path === '/v1/audio/speech' ? 'speech' : null;
    if (!route) throw new SpeechError(404, 'unknown_url', `Unknown route ${req.method} ${path.slice(0, 100)}.`);
    if (req.method !== 'POST') throw new SpeechError(405, 'method_not_allowed', `Use POST for ${path}.`);
    if (!bearerMatches(req.headers.authorization, config.token)) throw unauthorized();
    const session = sessionOf(req.socket);
    const client = clientOf(req);
    const lane = route === 'transcriptions' ? 'stt' : 'tts';
    const reserved = admit(req, {
      service,
      metrics,
      budget,
      lane,
      client,
      maxBody: route === 'transcriptions' ? maxBodyBytes : SPEECH_BODY_LIMIT,
    });
    try {
      if (route === 'transcriptions')
        await handleTranscription(req, res, session, signal, { service, client, maxAudioSeconds: config.maxAudioSeconds, maxBodyBytes });
      else await handleSpeech(req, res, session, signal, { service, client, maxTextChars: config.maxTextChars });
    } finally {
      budget.release(reserved);
    }
    return route;
  };

  // The cap, its idle-first eviction and the timeouts (SPEECH_REQUEST_TIMEOUT_SECONDS, ...) are the shared ones of lib/listen-limits.ts.
  const server = createServer(serverTimeoutOptions(config.listenLimits), (req, res) => {
    const gone = new AbortController();
    res.on('close', () => gone.abort());
    handle(req, res, gone.signal).then(
      (route) => metrics.requests.inc({ endpoint: route, outcome: 'ok' }),
      (err: unknown) => {
        const endpoint = (req.url ?? '').includes('/speech') ? 'speech' : 'transcriptions';
        const reset = (err as { code?: unknown } | null)?.code === 'ECONNRESET';
        if (err instanceof JobAbortedError || gone.signal.aborted || reset || (req.destroyed && !req.complete)) {
          // The client left (while its job waited, or mid-upload): nobody to answer, and no fault of ours.
          metrics.requests.inc({ endpoint, outcome: 'aborted' });
          log.debug('client left before its answer', { path: req.url?.split('?')[0] });
          return void res.destroy();
        }
        const failure = err instanceof SpeechError ? err : internalError();
        if (!(err instanceof SpeechError)) log.error('request failed', { method: req.method, path: req.url?.split('?')[0], err });
        metrics.requests.inc({ endpoint, outcome: String(failure.status) });
        // A body not read to its end would be parsed as the next request: close after answering.
        res.setHeader('connection', 'close');
        // A small rest of the body is read (and dropped) first, so that a client still sending it
        // sees the answer rather than a reset; a large one is not read at all: answered, then closed.
        const rest = declaredLength(req);
        if (!req.complete && !req.destroyed && rest !== null && rest <= MAX_DRAINED_BODY_BYTES) {
          req.once('end', () => sendError(res, failure));
          req.resume();
          return;
        }
        sendError(res, failure);
      },
    );
  });
  server.on('clientError', (err: Error & { code?: string }, socket: Duplex) => {
    if (!socket.writable) return void socket.destroy();
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT')
      return refuse(socket, 408, 'request_timeout', `The request was not received within ${config.requestTimeoutSeconds} s.`);
    if (err.code === 'HPE_HEADER_OVERFLOW') return refuse(socket, 431, 'headers_too_large', 'The request headers are too large.');
    refuse(socket, 400, 'invalid_request', 'The request is not valid HTTP/1.1.');
  });

  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: MAX_WS_MESSAGE_BYTES });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => undefined);
    const url = new URL(req.url ?? '/', 'http://speech');
    if (url.pathname !== '/v1/realtime') return refuse(socket, 404, 'unknown_url', `Unknown route GET ${url.pathname.slice(0, 100)}.`);
    if (!bearerMatches(req.headers.authorization, config.token)) return refuse(socket, 401, 'invalid_api_key', unauthorized().message);
    if (url.searchParams.get('intent') !== 'transcription')
      return refuse(socket, 400, 'invalid_request', 'This server serves transcription sessions only (?intent=transcription).');
    if (wss.clients.size >= config.maxSessions)
      return refuse(socket, 503, 'server_overloaded', `The speech server has ${config.maxSessions} realtime sessions open; retry later.`, {
        'retry-after': '5',
      });
    const client = clientOf(req);
    wss.handleUpgrade(req, socket, head, (ws) =>
      serveRealtimeSession(ws, {
        service,
        metrics,
        log,
        client,
        maxAudioSeconds: config.maxAudioSeconds,
        idleTimeoutMs: config.idleTimeoutSeconds * 1000,
        decode: config.realtimeDecode,
        splitPauseMs: config.splitPauseMs,
        splitMaxPieceSeconds: config.splitMaxPieceSeconds,
        earlyTailMs: config.earlyTailMs,
      }),
    );
  });
  capConnections(server, config.listenLimits, { log, portName: 'the speech port', variable: 'SPEECH_MAX_CONNECTIONS', upgrades: true });
  const closeSessions = () => {
    for (const ws of wss.clients) ws.close(1001, 'server shutting down');
  };
  server.on('close', () => wss.close());
  return { server, closeSessions };
}

/** An HTTP answer on a socket that asked to upgrade (or could not be parsed), in the OpenAI shape. */
function refuse(socket: Duplex, status: number, code: string, message: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(new SpeechError(status, code, message).toBody());
  const extra = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\ncontent-type: application/json\r\ncontent-length: ` +
      `${Buffer.byteLength(body)}\r\n${extra}connection: close\r\n\r\n${body}`,
  );
}
