import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.ts';

describe('loadConfig', () => {
  it('has defaults for everything and is frozen', () => {
    const c = loadConfig({ POD_NAME: 'op-0' });
    expect(c).toMatchObject({
      leaseNamespace: 'default',
      leaseName: 'voice-operator-leader',
      metricsPort: 8080,
      metricsAuth: 'kubernetes',
      resyncMs: 300_000,
      workers: 4,
      leaseDurationMs: 15_000,
    });
    expect(c.identity).toMatch(/^op-0_[0-9a-f]{8}$/);
    expect(c.watchNamespace).toBeUndefined();
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('puts no client-side rate limit on API requests unless KUBE_API_QPS asks for one', () => {
    // A default bucket of 50/100 held each new pool's children back about 200 ms (issue 23's bench).
    const d = loadConfig({});
    expect(d.apiQps).toBeUndefined();
    expect(d.apiBurst).toBeUndefined();
    expect(loadConfig({ KUBE_API_QPS: '50' })).toMatchObject({ apiQps: 50, apiBurst: 100 });
    expect(loadConfig({ KUBE_API_QPS: '20', KUBE_API_BURST: '30' })).toMatchObject({ apiQps: 20, apiBurst: 30 });
    expect(() => loadConfig({ KUBE_API_QPS: '0' })).toThrow(/^KUBE_API_QPS: expected a number above 0/);
    expect(() => loadConfig({ KUBE_API_BURST: '30' })).toThrow(/^KUBE_API_BURST: needs KUBE_API_QPS/);
  });

  it('rejects bad values with a message naming the variable', () => {
    expect(() => loadConfig({ METRICS_PORT: 'eighty' })).toThrow(/METRICS_PORT/);
    expect(() => loadConfig({ WORKERS: '0' })).toThrow(/WORKERS/);
    expect(() => loadConfig({ METRICS_AUTH: 'open' })).toThrow(/^METRICS_AUTH: must be kubernetes or none/);
    expect(() => loadConfig({ LEASE_DURATION_SECONDS: '5', RENEW_DEADLINE_SECONDS: '10' })).toThrow(
      /^RENEW_DEADLINE_SECONDS: must be below LEASE_DURATION_SECONDS \(5\)$/,
    );
    expect(() => loadConfig({ RENEW_DEADLINE_SECONDS: '2', RETRY_PERIOD_SECONDS: '2' })).toThrow(
      /^RETRY_PERIOD_SECONDS: must be below RENEW_DEADLINE_SECONDS \(2\)$/,
    );
  });

  it('reads the worker pod options, the Secret namespaces and the pod status switch', () => {
    const d = loadConfig({});
    expect(d).toMatchObject({ readPodStatus: true, build: { runAsUser: 1000 }, shutdownTimeoutMs: 20_000 });
    expect(d.secretNamespaces).toBeUndefined();
    expect(d.build.networkPolicy).toBeUndefined();
    const c = loadConfig({
      SECRET_NAMESPACES: 'a, b',
      READ_POD_STATUS: 'false',
      WORKER_RUN_AS_USER: 'platform',
      WORKER_NETWORK_POLICY: 'true',
      WORKER_METRICS_NAMESPACES: 'monitoring',
      SHUTDOWN_TIMEOUT_SECONDS: '5',
    });
    expect(c).toMatchObject({
      secretNamespaces: ['a', 'b'],
      readPodStatus: false,
      build: { networkPolicy: { metricsNamespaces: ['monitoring'] } },
      shutdownTimeoutMs: 5000,
    });
    expect(c.build.runAsUser).toBeUndefined();
    // Set but empty (the chart watching all namespaces with no secretNamespaces): read Secrets nowhere.
    expect(loadConfig({ SECRET_NAMESPACES: '' }).secretNamespaces).toEqual([]);
    expect(() => loadConfig({ WORKER_RUN_AS_USER: 'root' })).toThrow(/WORKER_RUN_AS_USER/);
  });

  it('reads the default worker image of pools that name none (the chart always sets it)', () => {
    expect(loadConfig({}).build.workerImage).toBeUndefined();
    expect(loadConfig({ WORKER_IMAGE_REPOSITORY: 'r.example.com/voice-worker' }).build.workerImage).toEqual({
      repository: 'r.example.com/voice-worker',
      tag: 'v1.3.0',
    });
    const digest = `sha256:${'c'.repeat(64)}`;
    expect(loadConfig({ WORKER_IMAGE_REPOSITORY: 'r/w', WORKER_IMAGE_TAG: 't-1', WORKER_IMAGE_DIGEST: digest }).build.workerImage).toEqual({
      repository: 'r/w',
      tag: 't-1',
      digest,
    });
    expect(() => loadConfig({ WORKER_IMAGE_REPOSITORY: 'r/w', WORKER_IMAGE_DIGEST: 'latest' })).toThrow(
      /^WORKER_IMAGE_DIGEST: must be sha256/,
    );
  });
});
