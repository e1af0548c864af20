import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The api-stub and the operator as real processes on a port something else holds: one line that
 * says which port and what to do, exit code 1, no stack trace (issue 19).
 */
let holder: Server;
let port: number;
let dir: string;

beforeAll(async () => {
  holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  port = (holder.address() as { port: number }).port;
  dir = mkdtempSync(join(tmpdir(), 'taken-port-'));
});
afterAll(async () => {
  await new Promise((resolve) => holder.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

function run(entry: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', entry], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('a taken port', () => {
  it('ends the api-stub with one clear line and exit code 1', async () => {
    const { code, stderr } = await run('api-stub/main.ts', {
      PORT: String(port),
      HOST: '127.0.0.1',
      API_STUB_MODE: 'development',
      API_STUB_DB: join(dir, 'a.sqlite'),
      LOG_LEVEL: 'error',
    });
    expect(code).toBe(1);
    expect(stderr).toBe(
      `api-stub: failed to start: cannot listen on 127.0.0.1:${port}: the port is already in use (EADDRINUSE); stop what holds it or set PORT to a free port\n`,
    );
  });

  it('ends the operator with one clear line and exit code 1 when its metrics port is taken', async () => {
    // A kubeconfig is all it reads before it listens; the API server is never reached.
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        'current-context': 'x',
        clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:9', 'insecure-skip-tls-verify': true } }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
        users: [{ name: 'u', user: { token: 'unused' } }],
      }),
    );
    const { code, stderr } = await run('operator/main.ts', {
      KUBECONFIG: kubeconfig,
      METRICS_HOST: '127.0.0.1',
      METRICS_PORT: String(port),
      LOG_LEVEL: 'error',
    });
    expect(code).toBe(1);
    expect(stderr).toBe(
      `voice-operator: failed to start: cannot listen on 127.0.0.1:${port}: the port is already in use ` +
        `(EADDRINUSE); stop what holds it or set METRICS_PORT to a free port\n`,
    );
  });
});

describe('a fault that reaches the top', () => {
  it('is logged as one line and ends the process with 70, as the worker does', async () => {
    const script = join(dir, 'fault.ts');
    writeFileSync(
      script,
      `import { exitOnUncaught } from '${join(process.cwd(), 'lib/process-exit.ts')}';
import { createLogger } from '${join(process.cwd(), 'lib/log.ts')}';
exitOnUncaught(createLogger({ name: 'probe' }));
setTimeout(() => { throw new Error('a bug'); }, 10);
setTimeout(() => {}, 60_000);
`,
    );
    const { code, stderr } = await run(script, {});
    expect(code).toBe(70);
    const lines = stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'error', msg: 'uncaughtException: exiting so that the process restarts' });
  });
});
