import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { createPodCgroup, pssBytes } from './pod-cgroup.ts';

/**
 * The capacity bench's pod: a real cgroup (v1 or v2, whichever this machine mounts), as root. A busy
 * child moved into it is held to the CPU quota and counted by the cgroup's own accounting.
 */
describe('pod cgroup', () => {
  it('holds a busy process to its CPU quota and accounts its CPU and memory', async () => {
    const pod = createPodCgroup(`voice-capacity-test-${process.pid}`, { cpus: 0.2, memoryBytes: 256 * 2 ** 20 });
    const child = spawn(process.execPath, ['-e', 'const end = Date.now() + 60_000; while (Date.now() < end);'], { stdio: 'ignore' });
    try {
      pod.add(child.pid!);
      expect(pod.holds(child.pid!)).toBe(true);
      expect(pod.holds(process.pid)).toBe(false);
      const cpu0 = pod.cpuSeconds();
      const t0 = performance.now();
      await new Promise((r) => setTimeout(r, 2000));
      const used = pod.cpuSeconds() - cpu0;
      const wall = (performance.now() - t0) / 1000;
      // A busy loop would take a whole core; the quota allows a fifth (plus one period of slack).
      expect(used).toBeGreaterThan(0);
      expect(used).toBeLessThanOrEqual(0.2 * wall + 0.1);
      expect(pod.memoryBytes()).toBeGreaterThan(1 * 2 ** 20);
      expect(pssBytes(child.pid!)).toBeGreaterThan(1 * 2 ** 20);
    } finally {
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
      await new Promise((r) => setTimeout(r, 200));
      pod.remove();
    }
  });
});
