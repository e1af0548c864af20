/**
 * How many interviews one worker pod runs when the pool does not say (`sizing.sessionsPerReplica`
 * unset): from the pod's resource requests and the capacity bench's measurement of today's design
 * (bench/capacity.bench.ts; the figures and the machine in docs/benchmarks.md, the sizing table in
 * docs/operator.md). Requests, not limits: they are what the scheduler guarantees and what the
 * HPA's CPU target is a share of. Pure.
 */
import { DAILY_SESSIONS_PER_BOT } from '../lib/daily-sessions.ts';
import type { VoiceWorkerPoolSpec } from './types.ts';

export const MEASURED_CAPACITY = {
  /**
   * Live interviews per CPU of the request at which turn latency held (LiveKit rooms, provider speech,
   * one bot process per interview).
   */
  sessionsPerCpu: 2,
  /** Memory of one live interview's bot process (PSS), with a margin for long answers. */
  sessionBytes: 200 * 2 ** 20,
  /** The worker process itself. */
  workerBytes: 200 * 2 ** 20,
} as const;

/** resources.requests' defaults in the CRD. */
const CRD_DEFAULT_REQUESTS = { cpu: '2', memory: '4Gi' };
/** At most what WARM_POOL_SIZE accepts. */
const MAX_SESSIONS = 256;

const CPU = /^([0-9]+(?:\.[0-9]+)?)(m?)$/;
const MEMORY = /^([0-9]+(?:\.[0-9]+)?)([KMGT]i?)?$/;
const UNITS: Record<string, number> = { '': 1, K: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 };

/** CPUs of a Kubernetes quantity as the CRD admits it ("2", "1.5", "500m", 2). */
export function cpuOf(quantity: string | number): number {
  const m = CPU.exec(String(quantity));
  if (!m) throw new Error(`not a CPU quantity: ${String(quantity)}`);
  return Number(m[1]) / (m[2] ? 1000 : 1);
}

/** Bytes of a Kubernetes memory quantity as the CRD admits it ("4Gi", "512Mi", "1G", "1000"). */
export function bytesOf(quantity: string): number {
  const m = MEMORY.exec(quantity);
  if (!m) throw new Error(`not a memory quantity: ${quantity}`);
  return Number(m[1]) * UNITS[m[2] ?? '']!;
}

/**
 * Sessions per replica for the pod's requests: what both its CPU and its memory allow, at least 1.
 * Daily rooms stay at one bot per replica, so at its DAILY_SESSIONS_PER_BOT sessions: each Daily bot
 * adds a Python bridge with its own WebRTC runtime, which the bench cannot run here (docs/operator.md).
 */
export function defaultSessionsPerReplica(
  spec: Pick<VoiceWorkerPoolSpec, 'roomProvider'> & { resources?: { requests?: Partial<VoiceWorkerPoolSpec['resources']['requests']> } },
): number {
  if (spec.roomProvider === 'daily') return DAILY_SESSIONS_PER_BOT;
  // The API server fills in the CRD's defaults; a spec built by hand may lack them.
  const requests = { ...CRD_DEFAULT_REQUESTS, ...spec.resources?.requests };
  const byCpu = Math.floor(cpuOf(requests.cpu) * MEASURED_CAPACITY.sessionsPerCpu + 1e-9);
  const byMemory = Math.floor((bytesOf(requests.memory) - MEASURED_CAPACITY.workerBytes) / MEASURED_CAPACITY.sessionBytes);
  return Math.min(MAX_SESSIONS, Math.max(1, Math.min(byCpu, byMemory)));
}

/** One pod runs this many sessions; the worker keeps as many warm slots (C7: one setting). */
export function sessionsPerReplica(spec: Parameters<typeof defaultSessionsPerReplica>[0] & Pick<VoiceWorkerPoolSpec, 'sizing'>): number {
  return spec.sizing?.sessionsPerReplica ?? defaultSessionsPerReplica(spec);
}
