/**
 * test/e2e/kind.sh needs Docker, which this machine lacks: check that it parses and that without
 * Docker it fails loudly (non-zero, naming what is missing) instead of passing quietly.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const script = fileURLToPath(new URL('../test/e2e/kind.sh', import.meta.url));

describe('test/e2e/kind.sh', () => {
  it('is valid bash', () => {
    const r = spawnSync('bash', ['-n', script], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('fails loudly when Docker or kind is missing', () => {
    const r = spawnSync('bash', [script], { encoding: 'utf8', env: { ...process.env, PATH: '/usr/bin:/bin' } });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/kind\.sh: '(docker|kind)' is required/);
  });
});
