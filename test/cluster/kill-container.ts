import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import type { ClusterInfo } from './cluster-script.ts';
import type { KubeCli } from './kube-cli.ts';
import { POOL_NAMESPACE } from './pool-fixtures.ts';

/**
 * `kill -9` of a pod's worker process, from the node. Inside the container the worker is PID 1, and the
 * kernel drops SIGKILL sent to a namespace's init from within it (`kubectl exec ... kill -9 1` does
 * nothing), so the signal comes from the host: containerd's task list (`ctr`) gives the host PID.
 */
const ctr = (cluster: ClusterInfo, args: string[]): Promise<string> =>
  new Promise((done, fail) => {
    // cluster.sh keeps containerd's socket next to the kubeconfig, in its run dir.
    const socket = join(dirname(cluster.kubeconfig), 'containerd', 'containerd.sock');
    execFile('ctr', ['--address', socket, '--namespace', 'k8s.io', ...args], (err, stdout, stderr) =>
      err ? fail(new Error(`ctr ${args.join(' ')} failed: ${stderr.trim() || err.message}`)) : done(stdout),
    );
  });

export interface Killed {
  pid: number;
  containerId: string;
  restartsBefore: number;
}

export async function killWorkerProcess(cluster: ClusterInfo, k: KubeCli, pod: string): Promise<Killed> {
  const p = await k.getJson<{ status: { containerStatuses?: Array<{ name: string; containerID?: string; restartCount: number }> } }>([
    'pod',
    pod,
    '-n',
    POOL_NAMESPACE,
  ]);
  const status = p.status.containerStatuses?.find((c) => c.name === 'worker');
  if (!status?.containerID) throw new Error(`pod ${pod} has no running worker container`);
  const containerId = status.containerID.replace(/^containerd:\/\//, '');
  // "TASK  PID  STATUS" lines.
  const row = (await ctr(cluster, ['task', 'ls']))
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .find((cols) => cols[0] === containerId);
  const pid = Number(row?.[1]);
  if (!row || !Number.isInteger(pid) || pid <= 1)
    throw new Error(`containerd has no running task for ${pod}'s worker container ${containerId}`);
  process.kill(pid, 'SIGKILL');
  return { pid, containerId, restartsBefore: status.restartCount };
}
