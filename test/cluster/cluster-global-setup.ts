import 'vitest';
import { spawnSync } from 'node:child_process';
import type { TestProject } from 'vitest/node';
import { CLUSTER_SCRIPT, parseClusterEnv, runClusterScript, type ClusterInfo } from './cluster-script.ts';

export { parseClusterEnv, type ClusterInfo } from './cluster-script.ts';

/**
 * The "cluster" project's one real single-node Kubernetes (scripts/cluster.sh, docs/cluster.md):
 * brought up once per run and taken down at the end, also when the run is interrupted.
 * KEEP_CLUSTER=1 leaves it running and prints the kubeconfig. Needs root: fails loudly otherwise.
 */
let up = false;
const keep = (): boolean => process.env.KEEP_CLUSTER === '1';
function downNow(): void {
  if (up && !keep()) spawnSync('bash', [CLUSTER_SCRIPT, 'down'], { stdio: 'inherit' });
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
  const info = parseClusterEnv((await runClusterScript('up')).stdout);
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
  await runClusterScript('down');
}

declare module 'vitest' {
  export interface ProvidedContext {
    cluster: ClusterInfo;
  }
}
