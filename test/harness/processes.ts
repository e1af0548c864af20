import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * A project entry file (api-stub/main.ts, worker/main.ts) run as its own Node process, the way an
 * operator runs it: one `node --import tsx` process (no launcher in between, so signals reach it),
 * its output kept in memory and in a log file for when something goes wrong.
 */
const ROOT = resolve(import.meta.dirname, '../..');

export interface ServiceProcess {
  name: string;
  proc: ChildProcess;
  /** Everything it printed so far. */
  output(): string;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
  exited: Promise<number | null>;
}

export function startServiceProcess(name: string, entry: string, env: NodeJS.ProcessEnv, logDir?: string): ServiceProcess {
  const proc = spawn(process.execPath, ['--import', 'tsx', entry], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const chunks: string[] = [];
  let file: WriteStream | undefined;
  if (logDir) {
    mkdirSync(logDir, { recursive: true });
    file = createWriteStream(join(logDir, `${name}.log`));
  }
  const collect = (d: Buffer): void => {
    chunks.push(d.toString());
    file?.write(d);
  };
  proc.stdout!.on('data', collect);
  proc.stderr!.on('data', collect);
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  void exited.then(() => file?.end());
  return {
    name,
    proc,
    exited,
    output: () => chunks.join(''),
    async stop(graceMs = 8_000) {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}
