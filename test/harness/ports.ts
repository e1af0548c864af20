import { createServer } from 'node:net';

/**
 * Test servers get their ports from 20000-29999: below the kernel's ephemeral range (32768-60999 on
 * Debian), from which it picks the port of every outgoing connection and of every `listen(0)`, and
 * below Kubernetes' NodePorts (30000-32767). A port the OS picked for us and we let go of could be
 * handed to another process before our server bound it (a worker exited with EADDRINUSE on a port
 * freed a moment earlier, docs/testing.md); in this range only this function hands ports out. Each
 * vitest worker (VITEST_POOL_ID; the main process is 0) has its own block of 1000, so two files running
 * at once never draw the same port, and each process walks its block from an offset of its own.
 */
const FIRST_PORT = 20_000;
const BLOCK = 1000;
const BLOCKS = 10;
const block = FIRST_PORT + (Number(process.env.VITEST_POOL_ID ?? 0) % BLOCKS) * BLOCK;
let next = process.pid % BLOCK;

/** A TCP port nothing listens on, from this process's block (see above); a taken one is skipped. */
export async function freePort(): Promise<number> {
  for (let tried = 0; tried < BLOCK; tried++) {
    const port = block + next;
    next = (next + 1) % BLOCK;
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port in ${block}-${block + BLOCK - 1}`);
}

/** Whether a server could listen on `port` on every address (IPv6 and IPv4 where both exist). */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, () => server.close(() => resolve(true)));
  });
}

/** Polls `probe` until it resolves true or the deadline passes; never a blind sleep. */
export async function waitFor(
  probe: () => Promise<boolean> | boolean,
  options: { timeoutMs: number; intervalMs?: number; what: string },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      if (await probe()) return;
    } catch (err) {
      lastError = err;
    }
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 50));
  }
  const cause = lastError instanceof Error ? `: ${lastError.message}` : '';
  throw new Error(`timed out after ${options.timeoutMs} ms waiting for ${options.what}${cause}`);
}
