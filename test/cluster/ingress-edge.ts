import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:https';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../harness/ports.ts';
import type { KubeCli } from './kube-cli.ts';

/**
 * The pool's TLS edge as an Ingress controller would run it, fed from the Ingress object the operator
 * made: no Ingress controller builds from what this machine's registries serve (docs/cluster.md,
 * "Ingress"), so Debian's nginx is configured from the Ingress's rules, TLS Secret and backend
 * Service, the way ingress-nginx would. It listens on the host and proxies to the Service's
 * ClusterIP (kube-proxy), WebSocket upgrades included, so the api-stub's spawn call and the
 * respondent's room both go through the edge.
 */
export interface IngressEdge {
  host: string;
  /**
   * Waits until a request through the edge is answered by a worker (its JSON refusal of a spawn
   * without a token), not by nginx itself: the host reaches a new Service's ClusterIP only once
   * kube-proxy has written its rules, a moment after the pool is Ready (a 502 until then).
   */
  waitServing(ca: string, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

interface IngressObject {
  spec: {
    tls?: Array<{ hosts?: string[]; secretName: string }>;
    rules: Array<{
      host: string;
      http: {
        paths: Array<{ path: string; pathType: string; backend: { service: { name: string; port: { number?: number; name?: string } } } }>;
      };
    }>;
  };
}
interface ServiceObject {
  spec: { clusterIP: string; ports: Array<{ name?: string; port: number }> };
}
interface SecretObject {
  data: Record<string, string>;
}

const NGINX = '/usr/sbin/nginx';

/** The nginx configuration for one Ingress: pure, from the objects as the API server has them. */
export function nginxConfig(o: {
  dir: string;
  listen: string;
  ingress: IngressObject;
  services: Record<string, ServiceObject>;
  certFiles: Record<string, { cert: string; key: string }>;
}): string {
  const servers = o.ingress.spec.rules.map((rule) => {
    const tls = o.ingress.spec.tls?.find((t) => (t.hosts ?? []).includes(rule.host));
    if (!tls) throw new Error(`the Ingress has no TLS entry for ${rule.host}: the spec's path needs TLS at the edge`);
    const files = o.certFiles[tls.secretName]!;
    const locations = rule.http.paths.map((p) => {
      const svc = o.services[p.backend.service.name];
      if (!svc) throw new Error(`the Ingress names Service ${p.backend.service.name}, which does not exist`);
      const port = p.backend.service.port.number ?? svc.spec.ports.find((sp) => sp.name === p.backend.service.port.name)?.port;
      if (!port) throw new Error(`Service ${p.backend.service.name} has no port ${JSON.stringify(p.backend.service.port)}`);
      // Prefix '/' is every path; Exact would be `location =`.
      const match = p.pathType === 'Exact' ? `= ${p.path}` : p.path;
      return `    location ${match} {
      proxy_pass http://${svc.spec.clusterIP}:${port};
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-Proto https;
      proxy_set_header X-Forwarded-For $remote_addr;
      proxy_read_timeout 3600s;
      proxy_send_timeout 3600s;
      proxy_buffering off;
    }`;
    });
    return `  server {
    listen ${o.listen} ssl;
    server_name ${rule.host};
    ssl_certificate ${files.cert};
    ssl_certificate_key ${files.key};
${locations.join('\n')}
  }`;
  });
  const temp = (name: string) => join(o.dir, name);
  return `daemon off;
worker_processes 1;
pid ${temp('nginx.pid')};
error_log ${temp('error.log')} warn;
events { worker_connections 512; }
http {
  access_log ${temp('access.log')};
  client_body_temp_path ${temp('body')};
  proxy_temp_path ${temp('proxy')};
  fastcgi_temp_path ${temp('fastcgi')};
  uwsgi_temp_path ${temp('uwsgi')};
  scgi_temp_path ${temp('scgi')};
  map $http_upgrade $connection_upgrade { default upgrade; '' close; }
${servers.join('\n')}
}
`;
}

export async function startIngressEdge(
  k: KubeCli,
  namespace: string,
  name: string,
  listen: { address: string; port: number },
): Promise<IngressEdge> {
  if (!existsSync(NGINX)) throw new Error(`${NGINX} is missing: scripts/cluster/deps.sh installs Debian's nginx-light`);
  const ingress = await k.getJson<IngressObject>(['ingress', name, '-n', namespace]);
  const dir = mkdtempSync(join(tmpdir(), 'voice-ingress-edge-'));
  const services: Record<string, ServiceObject> = {};
  for (const rule of ingress.spec.rules)
    for (const p of rule.http.paths)
      services[p.backend.service.name] ??= await k.getJson<ServiceObject>(['service', p.backend.service.name, '-n', namespace]);
  const certFiles: Record<string, { cert: string; key: string }> = {};
  for (const tls of ingress.spec.tls ?? []) {
    const secret = await k.getJson<SecretObject>(['secret', tls.secretName, '-n', namespace]);
    const cert = join(dir, `${tls.secretName}.crt`);
    const key = join(dir, `${tls.secretName}.key`);
    writeFileSync(cert, Buffer.from(secret.data['tls.crt']!, 'base64'));
    writeFileSync(key, Buffer.from(secret.data['tls.key']!, 'base64'), { mode: 0o600 });
    certFiles[tls.secretName] = { cert, key };
  }
  for (const sub of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, sub));
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, nginxConfig({ dir, listen: `${listen.address}:${listen.port}`, ingress, services, certFiles }));
  const child: ChildProcess = spawn(NGINX, ['-c', conf, '-p', dir, '-e', join(dir, 'error.log')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d) => (stderr += d.toString()));
  const errors = () => `${stderr}${existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : ''}`;
  await waitFor(() => child.exitCode === null && existsSync(join(dir, 'nginx.pid')), {
    timeoutMs: 10_000,
    what: `nginx for Ingress ${namespace}/${name} ${errors()}`,
  });
  const host = ingress.spec.rules[0]!.host;
  const probe = (ca: string): Promise<{ status: number; body: string }> =>
    new Promise((resolve) => {
      const req = request(
        {
          host: listen.address,
          port: listen.port,
          servername: host,
          ca,
          method: 'POST',
          path: '/',
          headers: { host, 'content-type': 'application/json', 'content-length': 2 },
          timeout: 5000,
        },
        (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', () => resolve({ status: 0, body: '' }));
      req.on('timeout', () => req.destroy());
      req.end('{}');
    });
  return {
    host,
    async waitServing(ca, timeoutMs = 60_000) {
      let last = { status: 0, body: '' };
      await waitFor(
        async () => {
          last = await probe(ca);
          return last.status === 401 && last.body.includes('"error"');
        },
        {
          timeoutMs,
          intervalMs: 500,
          what: `a worker to answer through the edge for ${host} (last: ${last.status} ${last.body.slice(0, 200)}) ${errors()}`,
        },
      );
    },
    close: async () => {
      if (child.exitCode === null) {
        await new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGQUIT');
        });
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
