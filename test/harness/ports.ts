import { createServer } from 'node:net';

/** A TCP port that was free a moment ago on 127.0.0.1 (the OS picks it). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') return reject(new Error('no port'));
      server.close(() => resolve(address.port));
    });
  });
}

/** Polls `probe` until it resolves true or the deadline passes; never a blind sleep. */
export async function waitFor(probe: () => Promise<boolean> | boolean, options: { timeoutMs: number; intervalMs?: number; what: string }): Promise<void> {
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
