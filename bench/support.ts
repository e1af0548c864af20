/**
 * Helpers every benchmark uses: the machine line, percentiles, one table format, timing loops and
 * servers in child processes. Not a benchmark itself (scripts/bench.sh runs *.bench.ts only).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** One line naming the machine, so that a table is never read without it. */
export function machineLine(): string {
  const cpu = cpus();
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  return (
    `machine: ${cpu.length} cores (${cpu[0]?.model.trim() ?? 'unknown'}), ${fmt(totalmem() / 2 ** 30, 1)} GiB ` +
    `memory, node ${process.version}, ${process.platform}/${process.arch}, load average ${load}`
  );
}

/** Nearest-rank percentile: always one of the samples. NaN samples are ignored; NaN when none are left. */
export function percentile(xs: readonly number[], p: number): number {
  const sorted = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** The nearest-rank median (the lower middle sample when the count is even). */
export const median = (xs: readonly number[]): number => percentile(xs, 50);

/** A number with a thousands separator and a fixed count of decimals. */
export const fmt = (n: number, digits = 0): string =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** Milliseconds, rounded, or n/a. */
export const ms = (x: number): string => (Number.isNaN(x) ? 'n/a' : `${x.toFixed(0)} ms`);

/**
 * Prints a Markdown table with padded columns, readable as plain text and when pasted into docs.
 * The first column is left-aligned, the others right-aligned unless `align` says otherwise.
 */
export function printTable(
  head: readonly string[],
  rows: ReadonlyArray<ReadonlyArray<string | number>>,
  align?: ReadonlyArray<'left' | 'right'>,
): void {
  const side = (c: number) => align?.[c] ?? (c === 0 ? 'left' : 'right');
  const widths = head.map((h, c) => Math.max(3, h.length, ...rows.map((r) => String(r[c] ?? '').length)));
  const line = (cells: ReadonlyArray<string | number>) =>
    `| ${cells.map((v, c) => (side(c) === 'left' ? String(v).padEnd(widths[c]!) : String(v).padStart(widths[c]!))).join(' | ')} |`;
  console.log(line(head));
  console.log(`|${widths.map((w, c) => (side(c) === 'left' ? `${'-'.repeat(w + 1)}-` : `${'-'.repeat(w + 1)}:`)).join('|')}|`);
  for (const r of rows) console.log(line(r));
}

/** Wall time of one awaited call, in milliseconds. */
export async function timeIt(run: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await run();
  return performance.now() - t0;
}

/** Calls of a synchronous function per second over about `ms` milliseconds, after a warm-up. */
export function opsPerSecond(fn: () => void, ms: number): number {
  for (let i = 0; i < 2000; i++) fn(); // warm-up: JIT
  let n = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < ms) {
    for (let i = 0; i < 500; i++) fn();
    n += 500;
    elapsed = performance.now() - start;
  }
  return (n / elapsed) * 1000;
}

/** Runs task(0..count-1) with at most `concurrency` in flight; resolves with completions per second. */
export async function ratePerSecond(count: number, concurrency: number, task: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await task(next++);
    }),
  );
  return count / ((performance.now() - t0) / 1000);
}

export interface ServerProcess {
  port: number;
  child: ChildProcess;
  /** SIGTERM, then resolves with what the server wrote to stderr. */
  stop(): Promise<string>;
}

/**
 * Starts a bench/servers script with tsx; it prints `{"port": n}` on stdout once it listens.
 * `stdin: true` leaves a pipe to its stdin (child.stdin), for a server the bench steers.
 */
export async function startServerProcess(
  script: string,
  env: Record<string, string> = {},
  options: { stdin?: boolean } = {},
): Promise<ServerProcess> {
  const child = spawn(`${ROOT}node_modules/.bin/tsx`, [script], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: [options.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve((JSON.parse(line) as { port: number }).port);
    });
    child.on('exit', (code) => reject(new Error(`${script} exited with ${code}: ${stderr}`)));
  });
  return {
    port,
    child,
    stop: () =>
      new Promise((resolve) => {
        child.on('exit', () => resolve(stderr.trim()));
        child.kill('SIGTERM');
      }),
  };
}

/** Resident memory of a process, in MiB (Linux /proc). */
export function rssMiB(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;
}

let clockTicks: number | undefined;
/**
 * CPU time (user + system) in seconds from the text of a /proc `stat` file, a process's
 * (/proc/<pid>/stat) or a thread's (/proc/<pid>/task/<tid>/stat): they have the same fields.
 */
export function cpuSecondsOfStat(stat: string): number {
  clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  // Fields after the command name (which may hold spaces), from field 3 (state): utime is 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / clockTicks;
}

/** CPU time (user + system) a process has used so far, in seconds (Linux /proc/<pid>/stat). */
export function cpuSecondsOf(pid: number): number {
  return cpuSecondsOfStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
}
