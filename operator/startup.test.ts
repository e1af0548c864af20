import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/** Start-up of the operator entry as the image runs it (`node operator/main.ts`, type stripping). */
const ROOT = resolve(import.meta.dirname, '..');

function runMain(env: NodeJS.ProcessEnv): Promise<{ code: number; output: string }> {
  return new Promise((r) =>
    execFile(
      process.execPath,
      ['operator/main.ts'],
      { cwd: ROOT, env: { PATH: process.env.PATH, ...env }, timeout: 15_000 },
      (err, stdout, stderr) => r({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, output: stdout + stderr }),
    ),
  );
}

describe('operator start-up', () => {
  it('exits 1 saying that no Kubernetes configuration was found, rather than a TLS error', async () => {
    const { code, output } = await runMain({ HOME: mkdtempSync(join(tmpdir(), 'no-kube-')) });
    expect(code).toBe(1);
    expect(output).toContain('no Kubernetes configuration found');
    expect(output).toContain('KUBECONFIG');
    expect(output).not.toContain('skipTLSVerify');
  });

  it('exits 1 naming a malformed variable', async () => {
    const { code, output } = await runMain({ HOME: tmpdir(), METRICS_PORT: 'eighty' });
    expect(code).toBe(1);
    expect(output).toMatch(/METRICS_PORT: /);
  });
});
