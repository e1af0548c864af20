import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import type { ClusterInfo } from './cluster-script.ts';

/** kubectl and helm against the test cluster, as a platform team runs them (real binaries). */
export interface KubeCli {
  kubectl(args: string[], input?: string): Promise<string>;
  helm(args: string[]): Promise<string>;
  /** kubectl get ... -o json, parsed. */
  getJson<T = Record<string, unknown>>(args: string[]): Promise<T>;
}

export const REPO_ROOT = resolve(import.meta.dirname, '../..');

export function kubeCli(cluster: ClusterInfo): KubeCli {
  const env = {
    ...process.env,
    KUBECONFIG: cluster.kubeconfig,
    PATH: `${cluster.binDir}:${process.env.PATH}`,
    HELM_CACHE_HOME: '/tmp/voice-cluster-helm/cache',
    HELM_CONFIG_HOME: '/tmp/voice-cluster-helm/config',
    HELM_DATA_HOME: '/tmp/voice-cluster-helm/data',
  };
  const run = (bin: string, args: string[], input?: string): Promise<string> =>
    new Promise((done, fail) => {
      const child = execFile(
        resolve(cluster.binDir, bin),
        args,
        { env, cwd: REPO_ROOT, maxBuffer: 32 * 1024 * 1024 },
        (err, stdout, stderr) => {
          if (err) fail(new Error(`${bin} ${args.join(' ')} failed: ${stderr.trim() || err.message}`));
          else done(stdout);
        },
      );
      if (input !== undefined) child.stdin!.end(input);
    });
  return {
    kubectl: (args, input) => run('kubectl', args, input),
    helm: (args) => run('helm', args),
    getJson: async (args) => JSON.parse(await run('kubectl', ['get', ...args, '-o', 'json'])),
  };
}
