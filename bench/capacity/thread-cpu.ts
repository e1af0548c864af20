import { readdirSync, readFileSync } from 'node:fs';
import { cpuSecondsOfStat } from '../support.ts';

/**
 * Where a process's CPU goes, by thread: the kernel's per-thread accounting (/proc/<pid>/task/<tid>/stat)
 * grouped by thread name (Node's main thread, V8's and libuv's helpers, the WebRTC runtime's and
 * tokio's threads inside rtc-node, ONNX Runtime's). Covers native code that a JavaScript profile
 * does not see.
 */
/** CPU seconds per thread name, summed over the given processes' threads. */
export function threadCpuSeconds(pids: readonly number[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const pid of pids) {
    let tids: string[];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue; // the process is gone
    }
    for (const tid of tids) {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const seconds = cpuSecondsOfStat(stat);
        // Numbered pools ("tokio-runtime-w", "ORT-worker-3") count as one.
        const key = name.replace(/[-_ ]?\d+$/, '');
        out.set(key, (out.get(key) ?? 0) + seconds);
      } catch {
        // the thread ended between the listing and the read
      }
    }
  }
  return out;
}

/** The CPU used between two samples, per thread name (threads that ended in between are lost). */
export function threadCpuDelta(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [name, seconds] of after) out.set(name, Math.max(0, seconds - (before.get(name) ?? 0)));
  return out;
}
