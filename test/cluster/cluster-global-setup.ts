import 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import type { TestProject } from 'vitest/node';

/**
 * The "cluster" project's one real single-node Kubernetes (scripts/cluster.sh, docs/cluster.md):
 * brought up once per run and taken down at the end, also when the run is interrupted.
 * KEEP_CLUSTER=1 leaves it running and prints the kubeconfig. Needs root: fails loudly otherwise.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const SCRIPT = resolve(ROOT, 'scripts/cluster.sh');

export interface ClusterInfo {
  kubeconfig: string;
  binDir: string;
  nodeIp: string;
  images: { worker: string; operator: string; redis: string };
}

/** The KEY=value lines `cluster.sh up` prints last. Pure. */
export function parseClusterEnv(text: string): ClusterInfo {
  const env = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^([A-Z_]+)=(.*)$/.exec(line.trim());
    if (m) env.set(m[1]!, m[2]!);
  }
  const need = (key: string): string => {
    const value = env.get(key);
    if (!value) throw new Error(`cluster.sh up printed no ${key}`);
    return value;
  };
  return {
    kubeconfig: need('KUBECONFIG'),
    binDir: need('KUBE_BIN_DIR'),
    nodeIp: need('NODE_IP'),
    images: { worker: need('WORKER_IMAGE'), operator: need('OPERATOR_IMAGE'), redis: need('REDIS_IMAGE') },
  };
}

function runScript(action: 'up' | 'down'): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('bash', [SCRIPT, action], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolvePromise(out) : reject(new Error(`scripts/cluster.sh ${action} exited with ${code}`))));
  });
}

let up = false;
const keep = (): boolean => process.env.KEEP_CLUSTER === '1';
function downNow(): void {
  if (up && !keep()) spawnSync('bash', [SCRIPT, 'down'], { cwd: ROOT, stdio: 'inherit' });
  up = false;
}

export async function setup(project: TestProject): Promise<void> {
  if (process.getuid?.() !== 0) {
    throw new Error('the cluster tests need root (containerd, bridges, iptables, sysctls): run npm test as root');
  }
  const started = Date.now();
  up = true;
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      downNow();
      process.exit(130);
    });
  }
  const info = parseClusterEnv(await runScript('up'));
  console.log(`cluster up in ${Date.now() - started} ms (kubeconfig ${info.kubeconfig})`);
  project.provide('cluster', info);
}

export async function teardown(): Promise<void> {
  if (!up) return;
  if (keep()) {
    console.log('KEEP_CLUSTER=1: the cluster stays up; `bash scripts/cluster.sh down` takes it down');
    console.log(`export KUBECONFIG=${process.env.VOICE_CLUSTER_DIR ?? '/run/voice-cluster'}/admin.kubeconfig`);
    return;
  }
  up = false;
  await runScript('down');
}

declare module 'vitest' {
  export interface ProvidedContext {
    cluster: ClusterInfo;
  }
}
