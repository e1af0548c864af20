import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

/**
 * scripts/cluster.sh from Node, for the cluster tests' global setup and the cluster bench: `up` prints
 * KEY=value lines last (what the tests need to reach the cluster), `down` puts the machine back.
 * No vitest here: the bench (tsx) imports it too.
 */
export const CLUSTER_SCRIPT = resolve(import.meta.dirname, '../../scripts/cluster.sh');
const ROOT = resolve(import.meta.dirname, '../..');

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

/** Runs `cluster.sh <action>`; its progress (stderr) goes to ours as it comes and is also returned. */
export function runClusterScript(action: 'up' | 'down'): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('bash', [CLUSTER_SCRIPT, action], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      process.stderr.write(d);
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolvePromise({ stdout, stderr }) : reject(new Error(`scripts/cluster.sh ${action} exited with ${code}`)),
    );
  });
}

/** What `up` rebuilt, from its progress lines ("images: voice-worker built in 312 s"). Pure. */
export function imagesBuilt(stderr: string): Array<{ image: string; seconds: number }> {
  return [...stderr.matchAll(/^images: (.+?) built in (\d+) s$/gm)].map((m) => ({ image: m[1]!, seconds: Number(m[2]) }));
}

/** What `up` imported into containerd because it was new there ("images: imported <ref> in 64 s"). Pure. */
export function imagesImported(stderr: string): Array<{ image: string; seconds: number }> {
  return [...stderr.matchAll(/^images: imported (\S+) in (\d+) s$/gm)].map((m) => ({ image: m[1]!, seconds: Number(m[2]) }));
}
