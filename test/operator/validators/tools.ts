/**
 * Where scripts/validators.sh put kubeconform, kube-score, pluto, promtool and the Kubernetes JSON
 * schemas, and how the tests run them. A missing tool is a loud error naming the script.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { kubeBinary, REPO_ROOT } from '../../harness/kube-binaries.ts';

export interface Validators {
  kubeconform: string;
  kubeScore: string;
  pluto: string;
  promtool: string;
  helm: string;
  /** Holds v<version>-standalone-strict/ for each of SCHEMA_KUBE_VERSIONS. */
  schemas: string;
}

/** The Kubernetes versions whose schemas the script lays out (scripts/validators-versions.env). */
export const SCHEMA_KUBE_VERSIONS = ['1.27.0', '1.37.0'] as const;

let cached: Validators | undefined;

export function validators(): Validators {
  if (cached) return cached;
  const dir = execFileSync('bash', [join(REPO_ROOT, 'scripts/validators.sh'), '--dir'], { encoding: 'utf8' }).trim();
  const tool = (name: string) => {
    const file = join(dir, 'bin', name);
    if (!existsSync(file))
      throw new Error(
        `${name} is missing at ${file}: run "bash scripts/validators.sh" first (npm test does; promtool's first build takes minutes)`,
      );
    return file;
  };
  const schemas = join(dir, 'schemas');
  for (const v of SCHEMA_KUBE_VERSIONS) {
    if (!existsSync(join(schemas, `v${v}-standalone-strict`, 'deployment-apps-v1.json')))
      throw new Error(`the Kubernetes ${v} JSON schemas are missing in ${schemas}: run "bash scripts/validators.sh" first`);
  }
  cached = {
    kubeconform: tool('kubeconform'),
    kubeScore: tool('kube-score'),
    pluto: tool('pluto'),
    promtool: tool('promtool'),
    helm: kubeBinary('helm'),
    schemas,
  };
  return cached;
}

export interface ToolResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a tool to its end (any exit code), feeding `input` on stdin. */
export function runTool(file: string, args: string[], input?: string): Promise<ToolResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(file, args, { cwd: REPO_ROOT, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1) : 0;
      if (code === -1) reject(err!);
      else resolve({ code, stdout, stderr });
    });
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** What a failing tool said, for an assertion message. */
export const said = (name: string, r: ToolResult): string => `${name} exited ${r.code}:\n${r.stdout}\n${r.stderr}`;
