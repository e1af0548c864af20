import { createServer as createHttpsServer } from 'node:https';
import { request as httpRequest } from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * How the host's test services meet the cluster. The harness's servers listen on 127.0.0.1, which a
 * pod cannot reach; a plain TCP relay on the node's address (10.213.0.1, its own bridge) makes them
 * reachable from pods without changing them. And an HTTPS edge on loopback stands where an Ingress
 * would stand: the api-stub only calls https endpoints, the edge terminates TLS with a throwaway CA
 * and forwards plain HTTP to the pool's Service (TLS terminates at the Ingress, as the spec says).
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
      s.on('error', () => { client.destroy(); upstream.destroy(); });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((done, fail) => server.once('error', fail).listen(0, host, done));
  const port = (server.address() as { port: number }).port;
  return { url: `${scheme}://${host}:${port}`, port, close: () => closeServer(server, sockets) };
}

/** HTTPS on 127.0.0.1 (the given certificate) to plain HTTP at `target` (e.g. http://<ClusterIP>:443). */
export async function httpsEdge(tls: { certPem: string; keyPem: string }, target: () => URL): Promise<Relay> {
  const sockets = new Set<Socket>();
  const server = createHttpsServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
    const to = target();
    const upstream = httpRequest({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...req.headers, host: to.host } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', (err) => {
      res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'bad_gateway', message: err.message }));
    });
    req.pipe(upstream);
  });
  server.on('connection', (s: Socket) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as { port: number }).port;
  return { url: `https://127.0.0.1:${port}`, port, close: () => closeServer(server as unknown as Server, sockets) };
}
