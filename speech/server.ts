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
import { bearerMatches, sendError, unauthorized } from './http-io.ts';
import type { SpeechMetrics } from './metrics.ts';
import { serveRealtimeSession } from './realtime.ts';
import type { SpeechService } from './service.ts';
import { handleSpeech } from './synthesis.ts';
import { handleTranscription } from './transcriptions.ts';

/**
 * The public port: the OpenAI-compatible routes under /v1 (docs/speech.md, "API"), each behind
 * the bearer token. A request's queue "session" is its connection (a bot keeps one alive), a
 * realtime session's is its own id. Every failure is answered in the OpenAI error shape; a fault
 * of ours is logged and answered 500 without detail. A client that sends a request too slowly is answered 408 (SPEECH_REQUEST_TIMEOUT_SECONDS).
 */
export interface SpeechServerDeps {
  config: SpeechConfig;
  service: SpeechService;
  metrics: SpeechMetrics;
  log: Logger;
}

const MAX_WS_MESSAGE_BYTES = 1024 * 1024;

export function createSpeechServer(deps: SpeechServerDeps): { server: Server; closeSessions: () => void } {
  const { config, service, metrics, log } = deps;
  const connectionIds = new WeakMap<Socket, string>();
  let nextConnection = 0;
  const sessionOf = (socket: Socket) => {
    let id = connectionIds.get(socket);
    if (!id) connectionIds.set(socket, (id = `conn-${++nextConnection}`));
    return id;
  };
  // 48 kHz stereo 16-bit for the longest accepted audio, plus the form's own bytes.
  const maxBodyBytes = Math.ceil(config.maxAudioSeconds * 48_000 * 2 * 2) + 64 * 1024;

  const handle = async (req: IncomingMessage, res: ServerResponse, signal: AbortSignal): Promise<string> => {
    const path = (req.url ?? '/').split('?')[0];
    const route = path === '/v1/audio/transcriptions' ? 'transcriptions' : path === '/v1/audio/speech' ? 'speech' : null;
    if (!route) throw new SpeechError(404, 'unknown_url', `Unknown route ${req.method} ${path.slice(0, 100)}.`);
    if (req.method !== 'POST') throw new SpeechError(405, 'method_not_allowed', `Use POST for ${path}.`);
    if (!bearerMatches(req.headers.authorization, config.token)) throw unauthorized();
    const session = sessionOf(req.socket);
    if (route === 'transcriptions') await handleTranscription(req, res, session, signal, { service, maxAudioSeconds: config.maxAudioSeconds, maxBodyBytes });
    else await handleSpeech(req, res, session, signal, { service, maxTextChars: config.maxTextChars });
    return route;
  };

  // The cap, its idle-first eviction and the timeouts (SPEECH_REQUEST_TIMEOUT_SECONDS, ...) are the shared ones of lib/listen-limits.ts.
  const server = createServer(serverTimeoutOptions(config.listenLimits), (req, res) => {
    const gone = new AbortController();
    res.on('close', () => gone.abort());
    handle(req, res, gone.signal).then(
      (route) => metrics.requests.inc({ endpoint: route, outcome: 'ok' }),
      (err: unknown) => {
        if (err instanceof JobAbortedError) return void res.destroy(); // the client left while it waited
        const failure = err instanceof SpeechError ? err : internalError();
        if (!(err instanceof SpeechError)) log.error('request failed', { method: req.method, path: req.url?.split('?')[0], err });
        metrics.requests.inc({ endpoint: (req.url ?? '').includes('/speech') ? 'speech' : 'transcriptions', outcome: String(failure.status) });
        // A body not read to its end would be parsed as the next request: close after answering.
        res.setHeader('connection', 'close');
        // Answering while the client still uploads makes it see a reset instead of the answer: read
        // the rest first (when it is not the too-large body itself), then answer.
        if (!req.complete && !req.destroyed && failure.status !== 413) {
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
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return refuse(socket, 408, 'request_timeout', `The request was not received within ${config.requestTimeoutSeconds} s.`);
    if (err.code === 'HPE_HEADER_OVERFLOW') return refuse(socket, 431, 'headers_too_large', 'The request headers are too large.');
    refuse(socket, 400, 'invalid_request', 'The request is not valid HTTP/1.1.');
  });

  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: MAX_WS_MESSAGE_BYTES });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => undefined);
    const url = new URL(req.url ?? '/', 'http://speech');
    if (url.pathname !== '/v1/realtime') return refuse(socket, 404, 'unknown_url', `Unknown route GET ${url.pathname.slice(0, 100)}.`);
    if (!bearerMatches(req.headers.authorization, config.token)) return refuse(socket, 401, 'invalid_api_key', unauthorized().message);
    if (url.searchParams.get('intent') !== 'transcription') return refuse(socket, 400, 'invalid_request', 'This server serves transcription sessions only (?intent=transcription).');
    if (wss.clients.size >= config.maxSessions) return refuse(socket, 503, 'server_overloaded', `The speech server has ${config.maxSessions} realtime sessions open; retry later.`, { 'retry-after': '5' });
    wss.handleUpgrade(req, socket, head, (ws) =>
      serveRealtimeSession(ws, { service, metrics, log, maxAudioSeconds: config.maxAudioSeconds, idleTimeoutMs: config.idleTimeoutSeconds * 1000,
        decode: config.realtimeDecode, splitPauseMs: config.splitPauseMs, splitMaxPieceSeconds: config.splitMaxPieceSeconds, earlyTailMs: config.earlyTailMs,
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
  const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}connection: close\r\n\r\n${body}`);
}


