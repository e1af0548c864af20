import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { intVar, type Env } from './env.ts';
import type { Logger } from './log.ts';

/**
 * What a stranger can hold on a listening port, the same on every port of every process (the
 * worker's public and management ports, the api-stub, the speech server's two ports). Without it a
 * process takes sockets until its file descriptors are gone, and its /healthz fails with them.
 *
 * - At most `maxConnections` connections are open. At the cap a new connection first makes room by
 *   closing the oldest connection that has no request in flight: one that has not sent a whole
 *   request head yet, else one idle between keep-alive requests. Only when every connection is busy
 *   (a request in flight, or a WebSocket) is the new one refused. So idle sockets can never keep a
 *   real request (a spawn, a probe) out: it evicts one of them.
 * - A request head not complete within `headersTimeoutMs` is answered 408 and closed; a whole
 *   request within `requestTimeoutMs`; a connection idle between requests is closed after
 *   `keepAliveTimeoutMs`. WebSockets are past their request and never timed out here.
 * - A socket whose own side has ended (an answer sent with `Connection: close`, a 408, a refused
 *   upgrade) is destroyed after a short grace even if the peer never reads nor closes.
 */
export interface ListenLimits {
  maxConnections: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
}

export interface ListenLimitDefaults {
  maxConnections: number;
  headersTimeoutSeconds: number;
  keepAliveTimeoutSeconds: number;
  /** Seconds for a whole request; by default the headers timeout plus 30 s (bodies are small). */
  requestTimeoutSeconds?: number;
}

/** `<prefix>_MAX_CONNECTIONS`, `<prefix>_HEADERS_TIMEOUT_SECONDS`, `<prefix>_KEEPALIVE_TIMEOUT_SECONDS`. */
export function readListenLimits(env: Env, prefix: string, defaults: ListenLimitDefaults): ListenLimits {
  const headersTimeoutSeconds = intVar(env, `${prefix}_HEADERS_TIMEOUT_SECONDS`, {
    default: defaults.headersTimeoutSeconds,
    min: 1,
    max: 300,
  });
  return {
    maxConnections: intVar(env, `${prefix}_MAX_CONNECTIONS`, { default: defaults.maxConnections, min: 10, max: 1_000_000 }),
    headersTimeoutMs: headersTimeoutSeconds * 1000,
    requestTimeoutMs: Math.max(headersTimeoutSeconds, defaults.requestTimeoutSeconds ?? headersTimeoutSeconds + 30) * 1000,
    keepAliveTimeoutMs:
      intVar(env, `${prefix}_KEEPALIVE_TIMEOUT_SECONDS`, { default: defaults.keepAliveTimeoutSeconds, min: 1, max: 3600 }) * 1000,
  };
}

/** The options of `http.createServer` / `https.createServer` that carry the timeouts. */
export function serverTimeoutOptions(limits: ListenLimits): {
  headersTimeout: number;
  requestTimeout: number;
  keepAliveTimeout: number;
  connectionsCheckingInterval: number;
} {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // How often Node checks the two request timeouts (its default, 30 s, would let idle ones pile up).
    connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(limits.headersTimeoutMs / 2))),
  };
}

export interface ConnectionCapOptions {
  log: Logger;
  /** Names the port in the warning, e.g. "the public port". */
  portName: string;
  /** The variable that sets the cap, named in the warning. */
  variable: string;
  /** The server answers WebSocket upgrades: an upgraded connection is busy for its whole life. */
  upgrades?: boolean;
}

/** Grace for a peer to read an answer we ended the connection with, before the socket is destroyed. */
const ENDED_GRACE_MS = 2000;

interface Tracked {
  socket: Socket;
  key: string;
  /** Requests in flight; -1 once upgraded (never evicted). */
  active: number;
}

/** Installs the connection cap and the ended-socket grace on `server` (docs in ListenLimits above). */
export function capConnections(server: Server, limits: ListenLimits, options: ConnectionCapOptions): void {
  // The cap is ours, not Node's `maxConnections`, which refuses the newcomer instead of an idle socket.
  const open = new Set<Tracked>();
  const byKey = new Map<string, Tracked>();
  // Evictable connections, oldest first: never sent a request head, then idle between requests.
  const fresh = new Set<Tracked>();
  const idle = new Set<Tracked>();
  // A TLS server's requests arrive on the TLS socket, not the TCP one: both share the peer's address and port.
  const keyOf = (socket: Socket) => `${socket.remoteAddress}|${socket.remotePort}`;
  let warnedAt = 0;
  const warn = (refused: boolean) => {
    if (Date.now() - warnedAt < 60_000) return; // once a minute: a flood must not flood the log too
    warnedAt = Date.now();
    options.log.warn(
      `${options.portName} is at its connection cap (${options.variable}); ` +
        `${refused ? 'every connection is busy, new ones are refused' : 'idle connections are closed to make room'}`,
      { maxConnections: limits.maxConnections },
    );
  };

  server.on('connection', (socket: Socket) => {
    if (open.size >= limits.maxConnections) {
      const victim = first(fresh) ?? first(idle);
      if (!victim) {
        warn(true);
        socket.destroy();
        return;
      }
      warn(false);
      forget(victim);
      victim.socket.destroy();
    }
    const tracked: Tracked = { socket, key: keyOf(socket), active: 0 };
    open.add(tracked);
    byKey.set(tracked.key, tracked);
    fresh.add(tracked);
    socket.once('close', () => forget(tracked));
    destroyAfterEnd(socket);
  });
  // Over TLS our side ends on the TLS socket (the TCP one never says 'finish').
  server.on('secureConnection', destroyAfterEnd);
  // A handshake that failed or timed out: the server's clientError handler may try an answer, which
  // cannot be written before a handshake, so its end never finishes.
  server.on('tlsClientError', (_err: Error, socket: Socket) => void setTimeout(() => socket.destroy(), ENDED_GRACE_MS).unref());
  const forget = (tracked: Tracked) => {
    open.delete(tracked);
    if (byKey.get(tracked.key) === tracked) byKey.delete(tracked.key);
    fresh.delete(tracked);
    idle.delete(tracked);
  };
  const busy = (socket: Socket): Tracked | undefined => {
    const tracked = byKey.get(keyOf(socket));
    if (!tracked) return undefined;
    fresh.delete(tracked);
    idle.delete(tracked);
    return tracked;
  };
  server.prependListener('request', (req, res) => {
    const tracked = busy(req.socket);
    if (!tracked || tracked.active < 0) return;
    tracked.active++;
    res.once('close', () => {
      tracked.active--;
      // Back of the line: the longest idle goes first.
      if (tracked.active === 0 && open.has(tracked)) idle.add(tracked);
    });
  });
  if (options.upgrades) {
    server.prependListener('upgrade', (req) => {
      const tracked = busy(req.socket);
      if (tracked) tracked.active = -1;
    });
  }
}

function destroyAfterEnd(socket: Socket): void {
  socket.once('finish', () => void setTimeout(() => socket.destroy(), ENDED_GRACE_MS).unref());
}

function first<T>(set: Set<T>): T | undefined {
  for (const value of set) return value;
  return undefined;
}
