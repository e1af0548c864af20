import { createHash, timingSafeEqual } from 'node:crypto';
import {
  createServer as createHttpServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';

/**
 * A protocol-faithful stand-in for a spawn endpoint (the hosted pipeline, or a self-hosted worker's
 * `POST /`): checks `Authorization: Bearer <key>` in constant time, answers `{room_url, token, transport}` (the
 * same room for a repeated sessionId), and can be switched to hang, answer slowly, fail, send
 * malformed JSON, or refuse connections outright. Real sockets, HTTPS when given a certificate.
 */
export type SpawnBehaviour =
  | { kind: 'ok' }
  | { kind: 'slow'; delayMs: number }
  | { kind: 'hang' }
  | { kind: 'status'; status: number }
  // The worker's own answer when no warm slot is free on any replica (docs/worker.md).
  | { kind: 'full' }
  | { kind: 'malformed' }
  // A 200 whose fields are changed: `transport: undefined` answers as a worker from before that field.
  | { kind: 'answer'; fields: Record<string, unknown> };

export interface RecordedSpawn {
  headers: IncomingHttpHeaders;
  rawBody: string;
  body: Record<string, unknown> | null;
  authorized: boolean;
}

export interface SpawnServerOptions {
  /** The bearer value this endpoint accepts. */
  key: string;
  /** Serving certificate (PEM); plain HTTP when absent. */
  tls?: { certPem: string; keyPem: string };
  /** Base of the room URLs it hands out. */
  roomBase: string;
  /** The room transport its answers name (docs/connect.md); absent: it answers as a worker from before that field. */
  transport?: string;
  port?: number;
}

export interface SpawnServer {
  url: string;
  port: number;
  requests: RecordedSpawn[];
  setBehaviour(behaviour: SpawnBehaviour): void;
  /** Stops listening (connections are refused) but keeps the port for `resume`. */
  refuse(): Promise<void>;
  resume(): Promise<void>;
  close(): Promise<void>;
}

function sameSecret(a: string, b: string): boolean {
  const h = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(h(a), h(b));
}

export async function startSpawnServer(options: SpawnServerOptions): Promise<SpawnServer> {
  let behaviour: SpawnBehaviour = { kind: 'ok' };
  const requests: RecordedSpawn[] = [];
  const rooms = new Map<string, { room_url: string; token: string }>();
  const sockets = new Set<Socket>();
  let counter = 0;

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let body: Record<string, unknown> | null = null;
      try {
        body = JSON.parse(rawBody) as Record<string, unknown>;
      } catch {
        body = null;
      }
      const auth = req.headers.authorization ?? '';
      const authorized = auth.startsWith('Bearer ') && sameSecret(auth.slice(7), options.key);
      requests.push({ headers: req.headers, rawBody, body, authorized });
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      if (req.method !== 'POST') return json(405, { error: 'method_not_allowed', message: 'Use POST.' });
      if (!authorized) return json(401, { error: 'invalid_token', message: 'The bearer token is missing or wrong.' });
      if (!body || typeof body.sessionId !== 'string') return json(400, { error: 'invalid_request', message: 'sessionId is required.' });
      const answer = (fields: Record<string, unknown> = {}) => {
        const sessionId = body.sessionId as string;
        let room = rooms.get(sessionId);
        if (!room) {
          counter += 1;
          room = { room_url: `${options.roomBase}/room-${counter}`, token: `join-${counter}-${sessionId}` };
          rooms.set(sessionId, room);
        }
        json(200, { ...room, transport: options.transport, sessionId, ...fields });
      };
      switch (behaviour.kind) {
        case 'ok':
          return answer();
        case 'slow':
          setTimeout(answer, behaviour.delayMs);
          return;
        case 'hang':
          return; // never answers; the socket stays open until the client gives up
        case 'status':
          return json(behaviour.status, { error: 'worker_fault', message: 'stand-in failure' });
        case 'full':
          res.setHeader('retry-after', '5');
          return json(503, {
            error: 'no_capacity',
            message: 'No warm voice bot is free on any replica. Retry after the Retry-After delay.',
          });
        case 'malformed':
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"room_url": ');
          return;
        case 'answer':
          return answer(behaviour.fields);
      }
    });
  };

  const server: Server = options.tls
    ? createHttpsServer({ cert: options.tls.certPem, key: options.tls.keyPem }, handle)
    : createHttpServer(handle);
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('secureConnection', () => undefined);

  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        const address = server.address();
        resolve(typeof address === 'object' && address ? address.port : port);
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });

  const port = await listen(options.port ?? 0);
  const scheme = options.tls ? 'https' : 'http';
  return {
    url: `${scheme}://127.0.0.1:${port}/`,
    port,
    requests,
    setBehaviour: (b) => {
      behaviour = b;
    },
    refuse: stop,
    resume: async () => {
      await listen(port);
    },
    close: async () => {
      if (server.listening) await stop();
    },
  };
}
