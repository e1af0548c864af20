/** Shared steps of the tests against the real API server (see test/harness/kube-global-setup.ts). */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { silentLogger, type Logger } from '../../lib/log.ts';
import type { OperatorConfig } from '../../operator/config.ts';
import { startOperator, type RunningOperator } from '../../operator/controller.ts';
import { isNotFound, KubeClient, resourcePath } from '../../operator/kube.ts';
import { poolPath } from '../../operator/reconcile.ts';
import type { VoiceWorkerPool } from '../../operator/types.ts';
import { kubeBinary, REPO_ROOT } from '../harness/kube-binaries.ts';
import { issueKubeconfig } from '../harness/kube-apiserver.ts';
import { waitFor } from '../harness/ports.ts';

const run = promisify(execFile);

export const kubeInfo = () => inject('kube');

export async function adminClient(): Promise<KubeClient> {
  return KubeClient.fromKubeConfig(kubeInfo().adminKubeconfig);
}

export function kubeconfigFor(user: string, groups: string[] = []): string {
  return issueKubeconfig(kubeInfo(), user, groups);
}

/** kubectl as admin (or another kubeconfig); rejects with kubectl's stderr. */
export async function kubectl(
  args: string[],
  options: { kubeconfig?: string; input?: string; anyExitCode?: boolean } = {},
): Promise<string> {
  const child = execFile(kubeBinary('kubectl'), ['--kubeconfig', options.kubeconfig ?? kubeInfo().adminKubeconfig, ...args], {
    cwd: REPO_ROOT,
    maxBuffer: 16 << 20,
  });
  if (options.input !== undefined) child.stdin?.end(options.input);
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (err += c.toString()));
    child.on('close', (code) =>
      code === 0 || options.anyExitCode ? resolve(out) : reject(new Error(`kubectl ${args.join(' ')} failed (${code}): ${err.trim()}`)),
    );
  });
}

/** The chart renders only with image.registry: nothing is published (docs/install.md). */
export const WITH_REGISTRY: readonly string[] = ['--set', 'image.registry=registry.example.com/voice'];

export async function helm(args: string[]): Promise<string> {
  try {
    const { stdout } = await run(kubeBinary('helm'), args, {
      cwd: REPO_ROOT,
      maxBuffer: 16 << 20,
      env: {
        ...process.env,
        HELM_CACHE_HOME: '/tmp/voice-helm/cache',
        HELM_CONFIG_HOME: '/tmp/voice-helm/config',
        HELM_DATA_HOME: '/tmp/voice-helm/data',
      },
    });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string };
    throw new Error(`helm ${args.join(' ')} failed: ${[e.stdout?.trim(), e.stderr?.trim()].filter(Boolean).join('\n') || e.message}`, {
      cause: err,
    });
  }
}

/** Installs the CRD from crds/ (idempotent; several files may call it) and waits until it is served. */
export async function ensureCrd(kube: KubeClient): Promise<void> {
  await kubectl(['apply', '--server-side', '--force-conflicts', '-f', join(REPO_ROOT, 'crds')]);
  await waitFor(
    async () => {
      const list = await kube.get<{ resources: Array<{ name: string }> }>('/apis/voice.service.io/v1beta1');
      return list.resources.some((r) => r.name === 'voiceworkerpools');
    },
    { timeoutMs: 30_000, intervalMs: 100, what: 'voiceworkerpools to be served' },
  );
}

export async function createNamespace(kube: KubeClient, prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await kube.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  return name;
}

export async function createSecret(kube: KubeClient, namespace: string, name: string, data: Record<string, string>): Promise<void> {
  const encoded = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
  await kube.request('POST', resourcePath({ group: '', version: 'v1', plural: 'secrets', namespace }), {
    body: { apiVersion: 'v1', kind: 'Secret', metadata: { name }, data: encoded },
  });
}

/**
 * The smallest valid pool spec; tests spread their own fields over it (`secrets` are merged). LiveKit
 * rooms, so that any replica count is valid (local rooms are one replica only); the model and
 * LiveKit keys point at the worker Secret's token, since the operator only checks that a referenced
 * key exists and never reads a value.
 */
export function poolSpec(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    image: { repository: 'registry.example.com/voice-worker' },
    redis: { url: 'redis://redis:6379' },
    backendUrl: 'https://app.service.example',
    roomProvider: 'livekit',
    livekit: { url: 'wss://livekit.example.com', secretName: 'worker', apiKeyKey: 'token', apiSecretKey: 'token' },
    ...extra,
    secrets: {
      workerToken: { name: 'worker' },
      openaiApiKey: { name: 'worker', key: 'token' },
      ...(extra.secrets as Record<string, unknown> | undefined),
    },
  };
}

export async function createPool(
  kube: KubeClient,
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
): Promise<VoiceWorkerPool> {
  return kube.request<VoiceWorkerPool>('POST', poolPath(namespace), {
    body: { apiVersion: 'voice.service.io/v1beta1', kind: 'VoiceWorkerPool', metadata: { name }, spec },
  });
}

export async function getOrUndefined<T>(kube: KubeClient, path: string): Promise<T | undefined> {
  try {
    return await kube.get<T>(path);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** Polls `read` until `check` accepts its value; returns that value. */
export async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, what: string, timeoutMs = 20_000): Promise<T> {
  let last: T | undefined;
  try {
    await waitFor(async () => check((last = await read())), { timeoutMs, intervalMs: 100, what });
  } catch (err) {
    throw new Error(`${(err as Error).message} (last value: ${JSON.stringify(last)?.slice(0, 600)})`, { cause: err });
  }
  return last as T;
}

export function testConfig(namespace: string, overrides: Partial<OperatorConfig> = {}): OperatorConfig {
  return {
    watchNamespace: namespace,
    leaseNamespace: namespace,
    leaseName: 'voice-operator-leader',
    identity: `test-${randomBytes(3).toString('hex')}`,
    metricsHost: '127.0.0.1',
    metricsPort: 0,
    resyncMs: 60_000,
    workers: 4,
    leaseDurationMs: 3000,
    renewDeadlineMs: 2000,
    retryPeriodMs: 300,
    blockedRetryMs: 1000,
    apiQps: 20,
    apiBurst: 30,
    readPodStatus: true,
    build: { runAsUser: 1000 },
    shutdownTimeoutMs: 20_000,
    ...overrides,
  };
}

export async function runOperator(
  kube: KubeClient,
  namespace: string,
  overrides: Partial<OperatorConfig> = {},
  log: Logger = silentLogger,
): Promise<RunningOperator> {
  return startOperator({ config: testConfig(namespace, overrides), kube, log });
}
