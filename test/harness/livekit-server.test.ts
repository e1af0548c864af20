import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './kube-binaries.ts';

/**
 * The LiveKit harness on a machine with loopback only: in a fresh network namespace (`unshare
 * --net`, only `lo`), ensureNonLoopbackInterface adds a veth pair, says so, and removes it again;
 * and with it, two WebRTC participants really connect through the server.
 */
describe('ensureNonLoopbackInterface', () => {
  it('creates a veth pair when only loopback exists, and cleans it up', () => {
    const script = `
      import { networkInterfaces } from 'node:os';
      import { ensureNonLoopbackInterface } from './test/harness/livekit-server.ts';
      const names = () => Object.keys(networkInterfaces()).sort().join(',');
      const before = names();
      const cleanup = ensureNonLoopbackInterface((line) => console.log('LOG ' + line));
      const during = names();
      cleanup?.();
      console.log(JSON.stringify({ before, during, after: names(), created: cleanup !== null }));
    `;
    // A new namespace's lo starts down; a loopback-only machine has it up.
    const run = spawnSync(
      'unshare',
      ['--net', 'sh', '-c', 'ip link set lo up && exec "$0" --import tsx --input-type=module -e "$1"', process.execPath, script],
      { cwd: REPO_ROOT, encoding: 'utf8' },
    );
    expect(run.status, run.stderr).toBe(0);
    const lines = run.stdout.trim().split('\n');
    const result = JSON.parse(lines.at(-1)!) as { before: string; during: string; after: string; created: boolean };
    expect(result.created).toBe(true);
    expect(result.before).toBe('lo');
    expect(result.during).toMatch(/^lo,vlk\d+$/);
    expect(result.after).toBe('lo');
    expect(lines.some((l) => l.startsWith('LOG livekit: no non-loopback interface here; creating veth'))).toBe(true);
  });

  it('makes WebRTC work through the LiveKit server on a loopback-only machine', () => {
    const run = spawnSync(
      'unshare',
      ['--net', 'sh', '-c', 'ip link set lo up && exec "$0" --import tsx test/harness/livekit-loopback-probe.ts', process.execPath],
      { cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000 },
    );
    expect(run.stderr).toContain('livekit: no non-loopback interface here; creating veth');
    expect(run.stdout).toContain('RESULT hello');
    expect(run.status, run.stderr.slice(-2000)).toBe(0);
  }, 90_000);

  it('leaves a machine that has a non-loopback interface alone', async () => {
    const { ensureNonLoopbackInterface } = await import('./livekit-server.ts');
    const { networkInterfaces } = await import('node:os');
    const hasOne = Object.values(networkInterfaces())
      .flat()
      .some((i) => i && !i.internal && i.family === 'IPv4');
    expect(hasOne).toBe(true); // this machine has eth0; the test above covers the other case
    expect(ensureNonLoopbackInterface()).toBeNull();
  });
});
