/**
 * A real Kubernetes API server on loopback, envtest-style: etcd plus kube-apiserver (no kubelet,
 * no controllers), with a throwaway PKI, RBAC on, and an admin kubeconfig (system:masters).
 * `issueKubeconfig` mints more identities from the same client CA, e.g. the operator's.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCertificateAuthority } from './pki.ts';
import { kubeBinary } from './kube-binaries.ts';
import { freePort, waitFor } from './ports.ts';

export interface KubeApiServer {
  url: string;
  /** CA of the serving certificate. */
  caFile: string;
  /** Client CA (cert and key) that the API server trusts. */
  clientCaCertFile: string;
  clientCaKeyFile: string;
  adminKubeconfig: string;
  /** etcd's client URL (plain HTTP on loopback), e.g. to compact history in a test. */
  etcdUrl: string;
  dir: string;
  stop(): Promise<void>;
}

export interface KubeconfigInfo {
  url: string;
  caFile: string;
  clientCaCertFile: string;
  clientCaKeyFile: string;
}

/** A kubeconfig for a new client certificate (CN = user, O = groups) signed by the client CA. */
export function issueKubeconfig(
  info: KubeconfigInfo,
  user: string,
  groups: string[] = [],
  dir = mkdtempSync(join(tmpdir(), 'voice-kubeconfig-')),
): string {
  const key = join(dir, `${safe(user)}.key`);
  const csr = join(dir, `${safe(user)}.csr`);
  const crt = join(dir, `${safe(user)}.crt`);
  const ext = join(dir, `${safe(user)}.ext`);
  writeFileSync(ext, 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n');
  const subject = `${groups.map((g) => `/O=${g}`).join('')}/CN=${user}`;
  execFileSync(
    'openssl',
    ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', subject, '-keyout', key, '-out', csr],
    { stdio: 'pipe' },
  );
  execFileSync(
    'openssl',
    [
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      info.clientCaCertFile,
      '-CAkey',
      info.clientCaKeyFile,
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      ext,
      '-out',
      crt,
    ],
    { stdio: 'pipe' },
  );
  const file = join(dir, `${safe(user)}.kubeconfig`);
  writeFileSync(
    file,
    [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{name: test, cluster: {server: "${info.url}", certificate-authority: "${info.caFile}"}}]`,
      `users: [{name: "${user}", user: {client-certificate: "${crt}", client-key: "${key}"}}]`,
      `contexts: [{name: test, context: {cluster: test, user: "${user}"}}]`,
      'current-context: test',
      '',
    ].join('\n'),
  );
  return file;
}

const safe = (s: string) => s.replace(/[^A-Za-z0-9_.-]/g, '_');

function track(proc: ChildProcess, name: string, logs: string[]): void {
  const keep = (chunk: Buffer) => {
    logs.push(chunk.toString());
    if (logs.length > 200) logs.splice(0, logs.length - 200);
  };
  proc.stdout?.on('data', keep);
  proc.stderr?.on('data', keep);
  proc.on('exit', (code) => logs.push(`\n[${name} exited with ${code}]\n`));
}

function httpsOk(url: string, opts: { ca?: string; cert?: string; key?: string } = {}): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(url, { ...opts, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

async function stopProcess(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

export async function startKubeApiServer(): Promise<KubeApiServer> {
  const etcdBin = kubeBinary('etcd');
  const apiBin = kubeBinary('kube-apiserver');
  const dir = mkdtempSync(join(tmpdir(), 'voice-kube-'));
  const certDir = join(dir, 'certs');
  mkdirSync(certDir);

  const servingCa = createCertificateAuthority('voice-kube-serving-ca');
  const serving = servingCa.issueServer('apiserver', ['127.0.0.1', 'localhost', '10.0.0.1']);
  writeFileSync(join(certDir, 'apiserver.crt'), serving.certPem);
  writeFileSync(join(certDir, 'apiserver.key'), serving.keyPem);
  const clientCa = createCertificateAuthority('voice-kube-client-ca');
  const saKey = join(dir, 'sa.key');
  const saPub = join(dir, 'sa.pub');
  execFileSync('openssl', ['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', saKey], { stdio: 'pipe' });
  execFileSync('openssl', ['pkey', '-in', saKey, '-pubout', '-out', saPub], { stdio: 'pipe' });

  const logs: string[] = [];
  const [etcdClient, etcdPeer, securePort] = [await freePort(), await freePort(), await freePort()];
  const etcdUrl = `http://127.0.0.1:${etcdClient}`;
  const etcd = spawn(
    etcdBin,
    [
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-cluster=default=http://127.0.0.1:${etcdPeer}`,
      '--unsafe-no-fsync',
      '--log-level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  track(etcd, 'etcd', logs);

  let api: ChildProcess | undefined;
  const stop = async () => {
    if (api) await stopProcess(api);
    await stopProcess(etcd);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(
      async () => {
        if (etcd.exitCode !== null) throw new Error('etcd exited');
        return new Promise<boolean>((resolve) => {
          fetch(`${etcdUrl}/health`).then(
            (r) => resolve(r.ok),
            () => resolve(false),
          );
        });
      },
      { timeoutMs: 30_000, what: 'etcd /health' },
    );

    api = spawn(
      apiBin,
      [
        `--etcd-servers=${etcdUrl}`,
        `--cert-dir=${certDir}`,
        `--secure-port=${securePort}`,
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        '--authorization-mode=RBAC',
        `--client-ca-file=${clientCa.certFile}`,
        '--service-cluster-ip-range=10.0.0.0/24',
        '--allow-privileged=true',
        '--disable-admission-plugins=ServiceAccount',
        `--service-account-key-file=${saPub}`,
        `--service-account-signing-key-file=${saKey}`,
        '--service-account-issuer=https://kubernetes.default.svc',
        '--endpoint-reconciler-type=none',
        // ConfigMaps bypass the watch cache, so a watch from a compacted version gets a real 410 Gone
        // from etcd (test/operator/watch.test.ts). The operator's own resources keep the cache.
        '--watch-cache-sizes=configmaps#0',
        '--v=0',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    track(api, 'kube-apiserver', logs);
    const admin = clientCa.issueClient('admin', 'admin', ['system:masters']);
    const url = `https://127.0.0.1:${securePort}`;
    await waitFor(
      async () => {
        if (api?.exitCode !== null) throw new Error('kube-apiserver exited');
        return httpsOk(`${url}/readyz`, { ca: servingCa.certPem, cert: admin.certPem, key: admin.keyPem });
      },
      { timeoutMs: 90_000, intervalMs: 200, what: 'kube-apiserver /readyz' },
    );

    const info = { url, caFile: servingCa.certFile, clientCaCertFile: clientCa.certFile, clientCaKeyFile: clientCa.keyFile };
    const adminKubeconfig = issueKubeconfig(info, 'admin', ['system:masters'], dir);
    return { ...info, adminKubeconfig, etcdUrl, dir, stop };
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}\n--- last API server / etcd output ---\n${logs.join('').slice(-4000)}`, { cause: err });
  }
}
