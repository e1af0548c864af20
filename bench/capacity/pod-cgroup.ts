import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A cgroup that confines a worker like a pod's limits do (the kubelet writes the same files):
 * a CPU quota (CFS, 100 ms period) and a memory limit, and the cgroup's own accounting of CPU time
 * and memory for everything inside it (the worker and the bot processes it forks). cgroup v2
 * (unified) or v1 (separate cpu, cpuacct and memory hierarchies), whichever the machine mounts.
 * Needs root; a machine where neither can be written is a loud error, never a skip.
 */
const ROOT = '/sys/fs/cgroup';
const PERIOD_US = 100_000;

export interface PodLimits {
  cpus: number;
  memoryBytes: number;
}

export interface PodCgroup {
  readonly limits: PodLimits;
  readonly version: 1 | 2;
  /** Moves a process (and the children it forks from then on) into the cgroup. */
  add(pid: number): void;
  /** True when the process is in this cgroup. */
  holds(pid: number): boolean;
  /** CPU time used by everything in the cgroup so far, in seconds. */
  cpuSeconds(): number;
  /** CFS periods so far, and those in which the quota ran out (the processes waited for the next period). */
  throttling(): { periods: number; throttled: number };
  /** Memory charged to the cgroup now (anonymous memory and page cache), in bytes. */
  memoryBytes(): number;
  /** Times the memory limit was hit (v1 failcnt, v2 memory.events max). */
  memoryLimitHits(): number;
  /** Removes the cgroup once its processes are gone. */
  remove(): void;
}

const read = (path: string): string => readFileSync(path, 'utf8').trim();

function unified(name: string, limits: PodLimits): PodCgroup {
  const dir = join(ROOT, name);
  const wanted = ['cpu', 'memory'];
  const enabled = read(join(ROOT, 'cgroup.subtree_control')).split(' ');
  const missing = wanted.filter((c) => !enabled.includes(c));
  if (missing.length > 0) writeFileSync(join(ROOT, 'cgroup.subtree_control'), missing.map((c) => `+${c}`).join(' '));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'cpu.max'), `${Math.round(limits.cpus * PERIOD_US)} ${PERIOD_US}`);
  writeFileSync(join(dir, 'memory.max'), String(limits.memoryBytes));
  const stat = (file: string, key: string): number => Number(new RegExp(`^${key} (\\d+)`, 'm').exec(read(join(dir, file)))?.[1] ?? NaN);
  return {
    limits,
    version: 2,
    add: (pid) => writeFileSync(join(dir, 'cgroup.procs'), String(pid)),
    holds: (pid) =>
      read(`/proc/${pid}/cgroup`)
        .split('\n')
        .some((l) => l === `0::/${name}`),
    cpuSeconds: () => stat('cpu.stat', 'usage_usec') / 1e6,
    throttling: () => ({ periods: stat('cpu.stat', 'nr_periods'), throttled: stat('cpu.stat', 'nr_throttled') }),
    memoryBytes: () => Number(read(join(dir, 'memory.current'))),
    memoryLimitHits: () => stat('memory.events', 'max'),
    remove: () => rmdirSync(dir),
  };
}

function legacy(name: string, limits: PodLimits): PodCgroup {
  const dirs = { cpu: join(ROOT, 'cpu', name), cpuacct: join(ROOT, 'cpuacct', name), memory: join(ROOT, 'memory', name) };
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true });
  writeFileSync(join(dirs.cpu, 'cpu.cfs_period_us'), String(PERIOD_US));
  writeFileSync(join(dirs.cpu, 'cpu.cfs_quota_us'), String(Math.round(limits.cpus * PERIOD_US)));
  writeFileSync(join(dirs.memory, 'memory.limit_in_bytes'), String(limits.memoryBytes));
  // A process moved in brings its memory's charge along where the kernel still can (newer kernels
  // refuse it); the bench moves the worker in at start, before it allocates much, either way.
  try {
    writeFileSync(join(dirs.memory, 'memory.move_charge_at_immigrate'), '3');
  } catch {
    // charged from the move on
  }
  return {
    limits,
    version: 1,
    add: (pid) => {
      for (const dir of Object.values(dirs)) writeFileSync(join(dir, 'cgroup.procs'), String(pid));
    },
    holds: (pid) => {
      const lines = read(`/proc/${pid}/cgroup`).split('\n');
      return ['cpu', 'cpuacct', 'memory'].every((c) =>
        lines.some((l) => l.split(':')[1]!.split(',').includes(c) && l.endsWith(`/${name}`)),
      );
    },
    cpuSeconds: () => Number(read(join(dirs.cpuacct, 'cpuacct.usage'))) / 1e9,
    throttling: () => {
      const text = read(join(dirs.cpu, 'cpu.stat'));
      const field = (key: string) => Number(new RegExp(`^${key} (\\d+)`, 'm').exec(text)?.[1] ?? NaN);
      return { periods: field('nr_periods'), throttled: field('nr_throttled') };
    },
    memoryBytes: () => Number(read(join(dirs.memory, 'memory.usage_in_bytes'))),
    memoryLimitHits: () => Number(read(join(dirs.memory, 'memory.failcnt'))),
    remove: () => {
      for (const dir of Object.values(dirs)) rmdirSync(dir);
    },
  };
}

/** Creates the cgroup `name` with the pod's limits (replacing a leftover of the same name). */
export function createPodCgroup(name: string, limits: PodLimits): PodCgroup {
  const v2 = existsSync(join(ROOT, 'cgroup.controllers'));
  const v1 = ['cpu', 'cpuacct', 'memory'].every((c) => existsSync(join(ROOT, c, 'cgroup.procs')));
  if (!v2 && !v1)
    throw new Error(
      `no writable cgroup hierarchy under ${ROOT} (neither cgroup v2 nor v1 cpu, cpuacct and memory): the capacity ` +
        `bench confines the worker like a pod and needs one`,
    );
  try {
    return v2 ? unified(name, limits) : legacy(name, limits);
  } catch (err) {
    throw new Error(`could not create the cgroup ${name} (run the bench as root): ${(err as Error).message}`, { cause: err });
  }
}

/** Proportional set size of a process in bytes (shared pages split between their users), Linux smaps_rollup. */
export function pssBytes(pid: number): number {
  try {
    return Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? NaN) * 1024;
  } catch {
    return NaN;
  }
}

/** Busy and total jiffies of the whole machine (/proc/stat), for its load over a window. */
export function machineJiffies(): { busy: number; total: number } {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.split(/\s+/).slice(1).map(Number);
  const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0);
  const total = cpu.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}
