import { describe, expect, it } from 'vitest';
import { bytesOf, cpuOf, defaultSessionsPerReplica, MEASURED_CAPACITY, sessionsPerReplica } from './capacity.ts';
import type { VoiceWorkerPoolSpec } from './types.ts';

const MiB = 2 ** 20;
const spec = (
  cpu: string | number,
  memory: string,
  roomProvider: VoiceWorkerPoolSpec['roomProvider'] = 'livekit',
  sizing?: VoiceWorkerPoolSpec['sizing'],
) => ({
  resources: { requests: { cpu, memory }, limits: { cpu: '8', memory: '16Gi' } },
  roomProvider,
  ...(sizing ? { sizing } : {}),
});

describe('sessions per replica from the measured capacity', () => {
  it('reads the quantities the CRD admits', () => {
    expect(cpuOf('2')).toBe(2);
    expect(cpuOf(3)).toBe(3);
    expect(cpuOf('1.5')).toBe(1.5);
    expect(cpuOf('500m')).toBe(0.5);
    expect(bytesOf('4Gi')).toBe(4 * 2 ** 30);
    expect(bytesOf('512Mi')).toBe(512 * MiB);
    expect(bytesOf('1G')).toBe(1e9);
    expect(bytesOf('1000')).toBe(1000);
    expect(() => cpuOf('two')).toThrow('not a CPU quantity');
    expect(() => bytesOf('4GB')).toThrow('not a memory quantity');
  });

  it('follows the CPU request where memory is ample', () => {
    const perCpu = MEASURED_CAPACITY.sessionsPerCpu;
    expect(defaultSessionsPerReplica(spec('2', '64Gi'))).toBe(Math.floor(2 * perCpu));
    expect(defaultSessionsPerReplica(spec('4', '64Gi'))).toBe(Math.floor(4 * perCpu));
    // Twice the CPU, twice the sessions (up to rounding down).
    expect(defaultSessionsPerReplica(spec('8', '64Gi'))).toBe(Math.floor(8 * perCpu));
  });

  it('follows the memory request where CPU is ample: the worker, then one bot per session', () => {
    const sessions = 3;
    const memory = `${(MEASURED_CAPACITY.workerBytes + sessions * MEASURED_CAPACITY.sessionBytes) / MiB}Mi`;
    expect(defaultSessionsPerReplica(spec('64', memory))).toBe(sessions);
    const justShort = `${(MEASURED_CAPACITY.workerBytes + sessions * MEASURED_CAPACITY.sessionBytes) / MiB - 1}Mi`;
    expect(defaultSessionsPerReplica(spec('64', justShort))).toBe(sessions - 1);
  });

  it('never goes below 1 (a small test pod) nor above what WARM_POOL_SIZE accepts', () => {
    expect(defaultSessionsPerReplica(spec('100m', '128Mi'))).toBe(1);
    expect(defaultSessionsPerReplica(spec('1000', '4096Gi'))).toBe(256);
  });

  it('keeps Daily pools at 1 (their bridge was never measured) and an explicit sessionsPerReplica as it is', () => {
    expect(defaultSessionsPerReplica(spec('8', '64Gi', 'daily'))).toBe(1);
    expect(
      sessionsPerReplica(spec('8', '64Gi', 'livekit', { p95ConcurrentSessions: 10, headroomPercent: 20, sessionsPerReplica: 1 })),
    ).toBe(1);
    expect(sessionsPerReplica(spec('8', '64Gi', 'livekit', { p95ConcurrentSessions: 10, headroomPercent: 20 }))).toBe(
      defaultSessionsPerReplica(spec('8', '64Gi')),
    );
  });
});
