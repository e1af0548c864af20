import {
  createServer as createHttpServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import { waitFor } from './ports.ts';

/**
 * A real webhook receiver on a real socket: records every request's raw body and headers, and
 * answers as told: a status (2xx, 500, ...), after an optional delay, or never (hang).
 */
export type ReceiverMode = { kind: 'status'; status: number; delayMs?: number } | { kind: 'hang' };

export interface ReceivedWebhook {
  rawBody: string;
  headers: IncomingHttpHeaders;
  path: string;
  receivedAt: number;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  setMode(mode: ReceiverMode): void;
  /** Answers the next requests with these modes in order, then falls back to the current mode. */
  script(modes: ReceiverMode[]): void;
  /** Polls until at least `count` requests arrived, or throws after `timeoutMs`. */
  waitForCount(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(
  options: { tls?: { certPem: string; keyPem: string }; path?: string; port?: number } = {},
): Promise<WebhookReceiver> {
  let mode: ReceiverMode = { kind: 'status', status: 200 };
  const received: ReceivedWebhook[] = [];
  const queue: ReceiverMode[] = [];
  const sockets = new Set<Socket>();
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        rawBody: Buffer.concat(chunks).toString('utf8'),
        headers: req.headers,
        path: req.url ?? '/',
        receivedAt: Date.now(),
      });
      const current = queue.shift() ?? mode;
      if (current.kind === 'hang') return;
      const answer = () => {
        res.writeHead(current.status, { 'content-type': 'text/plain' });
        res.end(current.status < 300 ? 'ok' : `receiver says ${current.status}`);
      };
      if (current.delayMs) setTimeout(answer, current.delayMs);
      else answer();
    });
  };
  const server: Server = options.tls
    ? createHttpsServer({ cert: options.tls.certPem, key: options.tls.keyPem }, handle)
    : createHttpServer(handle);
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}${options.path ?? '/webhooks'}`,
    received,
    setMode: (m) => {
      mode = m;
    },
    script: (modes) => {
      queue.push(...modes);
    },
    async waitForCount(count, timeoutMs = 10_000) {
      await waitFor(() => received.length >= count, { timeoutMs, what: `${count} webhook(s) at the receiver (got ${received.length})` });
      return received;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
