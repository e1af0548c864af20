/**
 * An HTTPS proxy in front of the test API server that can cut one client off: while partitioned,
 * new requests reach the proxy but not the server (they hang, as over a broken network); streams
 * already open keep flowing. On heal, held requests whose client still waits are sent on; the ones
 * the client gave up on are dropped. Every request that reached the server is recorded with its time.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { writeFileSync } from 'node:fs';
import { createServer, request, type RequestOptions } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createCertificateAuthority } from '../harness/pki.ts';

export interface Forwarded {
  method: string;
  path: string;
  userAgent?: string;
  /** performance.now() when the request was sent on to the API server. */
  at: number;
}

export interface ApiProxy {
  /** A kubeconfig whose server is this proxy. */
  kubeconfig: string;
  forwarded: Forwarded[];
  partition(): void;
  heal(): void;
  /** Holds requests whose `METHOD path` matches until `heal`, leaving the others alone. */
  hold(match: RegExp): void;
  /** Answers requests whose `METHOD path` matches with this status and Status message, until `heal`. */
  fail(match: RegExp, status: number, message: string): void;
  close(): Promise<void>;
}

export async function startApiProxy(adminKubeconfig: string): Promise<ApiProxy> {
  const kc = new KubeConfig();
  kc.loadFromFile(adminKubeconfig);
  const upstream = new URL(kc.getCurrentCluster()!.server);
  const tls: RequestOptions = {};
  await kc.applyToHTTPSOptions(tls);
  const ca = createCertificateAuthority('voice-proxy-ca');
  const serving = ca.issueServer('proxy', ['127.0.0.1']);
  const forwarded: Forwarded[] = [];
  let held: Array<() => void> = [];
  let partitioned = false;
  let holding: RegExp | undefined;
  let failing: { match: RegExp; status: number; message: string } | undefined;

  const send = (req: IncomingMessage, res: ServerResponse, body: Buffer, gone: () => boolean) => {
    if (gone()) return; // the client gave up: its connection closed, nothing it sent is delivered
    forwarded.push({
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      at: performance.now(),
      ...(req.headers['user-agent'] ? { userAgent: req.headers['user-agent'] } : {}),
    });
    const out = request(
      {
        ...tls,
        hostname: upstream.hostname,
        port: upstream.port,
        path: req.url,
        method: req.method,
        headers: { ...req.headers, host: upstream.host, ...(tls.headers as Record<string, string> | undefined) },
        agent: false,
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    res.on('close', () => out.destroy());
    out.end(body);
  };

  const server = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    let closed = false;
    res.on('close', () => (closed = true));
    const gone = () => closed || res.destroyed;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const line = `${req.method ?? 'GET'} ${req.url ?? '/'}`;
      if (failing?.match.test(line)) {
        res.writeHead(failing.status, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            kind: 'Status',
            apiVersion: 'v1',
            status: 'Failure',
            message: failing.message,
            reason: 'InternalError',
            code: failing.status,
          }),
        );
        return;
      }
      if (partitioned || holding?.test(line)) held.push(() => send(req, res, body, gone));
      else send(req, res, body, gone);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const kubeconfig = join(ca.dir, 'proxied.kubeconfig');
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{name: proxy, cluster: {server: "https://127.0.0.1:${port}", certificate-authority: "${ca.certFile}"}}]`,
      'users: [{name: proxied, user: {token: "the-proxy-adds-credentials"}}]',
      'contexts: [{name: proxy, context: {cluster: proxy, user: proxied}}]',
      'current-context: proxy',
      '',
    ].join('\n'),
  );

  return {
    kubeconfig,
    forwarded,
    partition: () => {
      partitioned = true;
    },
    hold: (match) => {
      holding = match;
    },
    fail: (match, status, message) => {
      failing = { match, status, message };
    },
    heal: () => {
      partitioned = false;
      holding = undefined;
      failing = undefined;
      const pending = held;
      held = [];
      for (const go of pending) go();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
