import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitFor } from './ports.ts';

/**
 * A real redis-server on loopback, started by the test itself. Fails loudly when the binary is
 * missing: scripts/bootstrap.sh installs Debian's redis-server.
 */
export interface RedisServer {
  url: string;
  port: number;
  stop(): Promise<void>;
  /** Kills the server (SIGKILL) but keeps its data dir, to simulate an outage. */
  kill(): Promise<void>;
  /** Starts it again on the same port and data dir after kill(). */
  start(): Promise<void>;
  /** kill() then start(). */
  restart(): Promise<void>;
}

export interface RedisOptions {
  /** Keep an append-only file so that a restart keeps acknowledged writes. */
  persistent?: boolean;
  port?: number;
  /** More redis-server arguments, e.g. `--replicaof`, TLS or ACL settings. */
  args?: string[];
}

function requireBinary(): string {
  const found = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  const path = found.stdout.trim();
  if (!path) throw new Error('redis-server is not installed: run `bash scripts/bootstrap.sh` (apt-get install redis-server)');
  return path;
}

async function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.setTimeout(500);
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (d) => {
      // A server that requires a login answers NOAUTH: it is up all the same.
      resolve(/^(\+PONG|-NOAUTH)/.test(d.toString()));
      socket.destroy();
    });
    socket.on('error', () => resolve(false));
    socket.on('timeout', () => {
      resolve(false);
      socket.destroy();
    });
  });
}

export async function startRedis(options: RedisOptions = {}): Promise<RedisServer> {
  const binary = requireBinary();
  const port = options.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), 'redis-test-'));
  let child: ChildProcess | undefined;

  const launch = async (): Promise<void> => {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--daemonize', 'no'];
    args.push('--appendonly', options.persistent ? 'yes' : 'no');
    if (options.persistent) args.push('--appendfsync', 'always');
    args.push(...(options.args ?? []));
    const proc = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    child = proc;
    let stderr = '';
    proc.stderr?.on('data', (d) => (stderr += d.toString()));
    await waitFor(() => ping(port), { timeoutMs: 10_000, what: `redis-server on port ${port} ${stderr}` });
  };

  const stop = async (): Promise<void> => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      proc.once('exit', () => resolve());
      proc.kill('SIGKILL');
    });
  };

  await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
    kill: stop,
    start: launch,
    restart: async () => {
      await stop();
      await launch();
    },
  };
}
