import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * How the host's test services meet the cluster. The harness's servers listen on 127.0.0.1, which a
 * pod cannot reach; a plain TCP relay on the node's address (10.213.0.1, its own bridge) makes them
 * reachable from pods without changing them.
 */
export interface Relay {
  url: string;
  port: number;
  close(): Promise<void>;
}

function closeServer(server: Server, sockets: Set<Socket>): Promise<void> {
  return new Promise((done) => {
    for (const s of sockets) s.destroy();
    server.close(() => done());
  });
}

/** Relays TCP from `host`:(free port) to 127.0.0.1:`targetPort`. */
export async function relayToLoopback(host: string, targetPort: number, scheme = 'http'): Promise<Relay> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((done, fail) => server.once('error', fail).listen(0, host, done));
  const port = (server.address() as { port: number }).port;
  return { url: `${scheme}://${host}:${port}`, port, close: () => closeServer(server, sockets) };
}
