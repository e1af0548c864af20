import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from './ports.ts';

/** The kernel's ephemeral range on this machine: ports it may give anyone at any moment. */
async function ephemeralRange(): Promise<[number, number]> {
  const { readFileSync } = await import('node:fs');
  const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  return [low!, high!];
}

describe('freePort', () => {
  it("hands out distinct ports from this vitest worker's own block, outside the kernel's ephemeral range and the NodePorts", async () => {
    const [low, high] = await ephemeralRange();
    const ports = [];
    for (let i = 0; i < 50; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(50);
    const block = 20_000 + (Number(process.env.VITEST_POOL_ID ?? 0) % 10) * 1000;
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(block);
      expect(port).toBeLessThan(block + 1000);
      expect(port < low || port > high).toBe(true);
      expect(port < 30_000 || port > 32_767).toBe(true);
    }
  });

  it('skips a port something already listens on', async () => {
    const first = await freePort();
    // Hold the port the next call would give, then ask: it must not be handed out.
    const held = createServer();
    await new Promise<void>((resolve) => held.listen(first + 1, resolve));
    try {
      const second = await freePort();
      expect(second).not.toBe(first + 1);
      expect(second).not.toBe(first);
    } finally {
      await new Promise((resolve) => held.close(resolve));
    }
  });
});
