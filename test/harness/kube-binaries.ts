/**
 * Where scripts/kube-binaries.sh put kube-apiserver, etcd, kubectl and helm. Missing binaries are
 * a loud error that names the script, never a quiet skip.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export type KubeBinary = 'kube-apiserver' | 'etcd' | 'kubectl' | 'helm';

let cached: string | undefined;

export function kubeBinDir(): string {
  cached ??= execFileSync('bash', [join(REPO_ROOT, 'scripts/kube-binaries.sh'), '--bin-dir'], { encoding: 'utf8' }).trim();
  return cached;
}

export function kubeBinary(name: KubeBinary): string {
  const file = join(kubeBinDir(), name);
  if (!existsSync(file)) {
    throw new Error(
      `${name} is missing at ${file}: run "bash scripts/kube-binaries.sh" first (npm test does; the first build takes several minutes)`,
    );
  }
  return file;
}
