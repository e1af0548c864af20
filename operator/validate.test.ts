import { describe, expect, it } from 'vitest';
import { decideFloor } from './floor.ts';
import type { VoiceWorkerPool } from './types.ts';
import { secretProblem, specProblem } from './validate.ts';

const pool = {
  metadata: { name: 'p', namespace: 'ns', uid: 'u' },
  spec: {
    replicas: 1,
    secrets: { workerToken: { name: 'w', key: 'token' }, llmApiKey: { name: 'prov', key: 'llm' } },
    redis: { urlSecret: { name: 'redis', key: 'url' } },
    autoscaling: {
      enabled: true,
      minReplicas: 1,
      maxReplicas: 3,
      targetCPUUtilizationPercentage: 70,
      scaleDown: { stabilizationWindowSeconds: 0, maxPercentPerMinute: 10 },
    },
    sizing: { p95ConcurrentSessions: 10, headroomPercent: 20, sessionsPerReplica: 1 },
  },
} as unknown as VoiceWorkerPool;

describe('validate', () => {
  it('names the first missing Secret or key and the field that refers to it', () => {
    const ok = new Map([
      ['w', ['token']],
      ['prov', ['llm']],
      ['redis', ['url']],
    ]);
    expect(secretProblem(pool, ok)).toBeUndefined();
    expect(secretProblem(pool, new Map([...ok, ['prov', undefined]]))).toEqual({
      reason: 'SecretNotFound',
      message: 'Secret ns/prov named by spec.secrets.llmApiKey does not exist; create it or fix spec.secrets.llmApiKey.name',
    });
    expect(secretProblem(pool, new Map([...ok, ['redis', ['other']]]))).toEqual({
      reason: 'SecretKeyNotFound',
      message: 'Secret ns/redis has no key "url" named by spec.redis.urlSecret.key',
    });
  });

  it('refuses a Secret name that is a path (. or ..) before any request names it (a pool stored under an older CRD)', () => {
    for (const name of ['.', '..', 'Upper']) {
      const bad = {
        ...pool,
        spec: { ...pool.spec, secrets: { ...pool.spec.secrets, workerToken: { name, key: 'token' } } },
      } as unknown as VoiceWorkerPool;
      expect(specProblem(bad, decideFloor(bad.spec, new Date()))).toEqual({
        reason: 'InvalidSpec',
        message: `VoiceWorkerPool p: spec.secrets.workerToken names the Secret "${name}", which is not a valid Secret name (a DNS subdomain)`,
      });
    }
  });

  it('refuses extraEnv that would override a variable the operator sets, and checks its Secrets', () => {
    const withExtra = {
      ...pool,
      spec: { ...pool.spec, autoscaling: undefined, extraEnv: [{ name: 'WORKER_TOKEN', value: 'x' }] },
    } as unknown as VoiceWorkerPool;
    expect(specProblem(withExtra, decideFloor(withExtra.spec, new Date()))?.message).toContain(
      'spec.extraEnv sets WORKER_TOKEN, which the operator sets',
    );
    // A pool stored before the CRD refused loader names is refused by the operator too.
    const hooked = {
      ...pool,
      spec: { ...pool.spec, autoscaling: undefined, extraEnv: [{ name: 'NODE_OPTIONS', value: '--import=data:text/javascript,0' }] },
    } as unknown as VoiceWorkerPool;
    expect(specProblem(hooked, decideFloor(hooked.spec, new Date()))).toMatchObject({
      reason: 'InvalidSpec',
      message: expect.stringContaining('spec.extraEnv sets NODE_OPTIONS, which changes how the worker'),
    });
    const s3 = {
      ...pool,
      spec: { ...pool.spec, extraEnv: [{ name: 'AWS_SECRET_ACCESS_KEY', valueFrom: { secretKeyRef: { name: 's3', key: 'secret' } } }] },
    } as unknown as VoiceWorkerPool;
    const ok = new Map([
      ['w', ['token']],
      ['prov', ['llm']],
      ['redis', ['url']],
    ]);
    expect(secretProblem(s3, ok)?.message).toBe(
      'Secret ns/s3 named by spec.extraEnv[0].valueFrom.secretKeyRef does not exist; create it or fix spec.extraEnv[0].valueFrom.secretKeyRef.name',
    );
  });

  it('refuses local rooms that may run on more than one replica behind one address', () => {
    const local = (spec: Record<string, unknown>) =>
      ({ ...pool, spec: { ...pool.spec, roomProvider: 'local', sizing: undefined, ...spec } }) as unknown as VoiceWorkerPool;
    const problem = (p: VoiceWorkerPool) => specProblem(p, decideFloor(p.spec, new Date()));
    expect(problem(local({}))?.message).toContain('this pool may run 3 replicas behind one address');
    expect(problem(local({ autoscaling: undefined, replicas: 2 }))?.message).toContain('may run 2 replicas');
    expect(problem(local({ autoscaling: undefined, replicas: 1 }))).toBeUndefined();
    expect(problem(local({ publicUrl: 'https://$(POD_NAME).rooms.example.com' }))).toBeUndefined();
    expect(problem(local({ roomProvider: 'livekit' }))).toBeUndefined();
  });

  it('rejects a floor above the autoscaling maximum', () => {
    const problem = specProblem(pool, decideFloor(pool.spec, new Date()));
    expect(problem?.reason).toBe('InvalidSpec');
    expect(problem?.message).toContain('the replica floor 12 (sizing 12) exceeds spec.autoscaling.maxReplicas 3');
  });

  it('checks the floor with a sessionsPerReplica derived from the requests (admission cannot: CEL skips it when unset)', () => {
    // 2 CPU, 4Gi: 4 sessions per pod (capacity.ts); 100 x 1.2 / 4 = 30 workers under a maximum of 20.
    const derived = {
      ...pool,
      spec: {
        ...pool.spec,
        roomProvider: 'livekit',
        resources: { requests: { cpu: '2', memory: '4Gi' } },
        autoscaling: { ...pool.spec.autoscaling!, maxReplicas: 20 },
        sizing: { p95ConcurrentSessions: 100, headroomPercent: 20 },
      },
    } as unknown as VoiceWorkerPool;
    expect(specProblem(derived, decideFloor(derived.spec, new Date()))?.message).toContain(
      'the replica floor 30 (sizing 30) exceeds spec.autoscaling.maxReplicas 20',
    );
    // The same pool with requests of 4 CPU: 8 per pod, 15 workers fit.
    const bigger = {
      ...derived,
      spec: { ...derived.spec, resources: { requests: { cpu: '4', memory: '8Gi' } } },
    } as unknown as VoiceWorkerPool;
    expect(specProblem(bigger, decideFloor(bigger.spec, new Date()))).toBeUndefined();
  });
});

describe('Secrets the operator may not read', () => {
  it('are not checked (null), while the readable ones still are', () => {
    expect(
      secretProblem(
        pool,
        new Map<string, string[] | undefined | null>([
          ['w', null],
          ['prov', null],
          ['redis', null],
        ]),
      ),
    ).toBeUndefined();
    expect(
      secretProblem(
        pool,
        new Map<string, string[] | undefined | null>([
          ['w', null],
          ['prov', ['other']],
          ['redis', null],
        ]),
      )?.reason,
    ).toBe('SecretKeyNotFound');
  });
});

describe('schedules', () => {
  it('refuse an unknown time zone or a bad cron, naming the schedule', () => {
    const withSchedule = (cron: string, timeZone: string) =>
      ({
        ...pool,
        spec: {
          ...pool.spec,
          autoscaling: undefined,
          preScaling: { leadSeconds: 0, windows: [], schedules: [{ cron, timeZone, durationMinutes: 60, replicas: 2 }] },
        },
      }) as unknown as VoiceWorkerPool;
    const tz = withSchedule('0 9 * * *', 'Mars/Olympus');
    expect(specProblem(tz, decideFloor(tz.spec, new Date()))?.message).toBe(
      'VoiceWorkerPool p: spec.preScaling.schedules[0]: unknown time zone "Mars/Olympus"',
    );
    const cron = withSchedule('0 9 * * MON', 'UTC');
    expect(specProblem(cron, decideFloor(cron.spec, new Date()))?.message).toContain(
      'spec.preScaling.schedules[0]: cron day of week "MON"',
    );
  });
});
