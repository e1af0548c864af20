import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-compatible.ts';
import { baseEnv, spawnBody, startFakeBackend, startWorkerProcess, WORKER_TOKEN, type FakeBackend } from './harness.ts';

/** Start-up: a bad configuration is one clear line and a non-zero exit; secrets stay out of logs. */
const ROOT = resolve(import.meta.dirname, '../..');

function runMain(env: NodeJS.ProcessEnv): Promise<{ code: number; stderr: string }> {
  return new Promise((r) =>
    execFile(
      process.execPath,
      ['worker/main.ts'],
      { cwd: ROOT, env: { PATH: process.env.PATH, ...env }, timeout: 15_000 },
      (err, _stdout, stderr) =>
        r({
          code: err ? Number((err as { code?: number }).code ?? 1) : 0,
          stderr: stderr
            .split('\n')
            .filter((l) => l && !/ExperimentalWarning|--trace-warnings/.test(l))
            .join('\n'),
        }),
    ),
  );
}

let openai: FakeOpenAI;
let backend: FakeBackend;
beforeAll(async () => {
  [openai, backend] = await Promise.all([startFakeOpenAI({ voice: 'tone' }), startFakeBackend()]);
});
afterAll(async () => {
  await Promise.all([openai?.close(), backend?.close()]);
});

describe('worker start-up', () => {
  it('exits 1 with one line naming a missing variable', async () => {
    const { code, stderr } = await runMain({ BACKEND_URL: 'https://app.example.com', OPENAI_API_KEY: 'sk-x' });
    expect(code).toBe(1);
    expect(stderr).toBe(
      'worker: configuration error: WORKER_TOKEN: is required (the shared bearer token that the service sends on spawn calls)',
    );
  });

  it('exits 1 naming a malformed variable', async () => {
    const { code, stderr } = await runMain({
      WORKER_TOKEN,
      BACKEND_URL: 'https://app.example.com',
      OPENAI_API_KEY: 'sk-x',
      ROOM_PROVIDER: 'local',
      WARM_POOL_SIZE: '-1',
    });
    expect(code).toBe(1);
    expect(stderr).toMatch(/^worker: configuration error: WARM_POOL_SIZE: expected an integer from 0 to 256, got -1$/);
  });

  it('never writes the worker token or provider keys to its logs, even at debug level', async () => {
    const env = baseEnv({
      redisUrl: inject('redisUrl'),
      backendUrl: backend.url,
      llmUrl: openai.url,
      REDIS_KEY_PREFIX: `startup-${Date.now()}`,
      LOG_LEVEL: 'debug',
      WARM_POOL_SIZE: '1',
    });
    const worker = await startWorkerProcess(env);
    try {
      await worker.waitReady();
      await worker.spawnSession(spawnBody(), 'wrong-token-that-is-long');
      await worker.spawnSession(spawnBody({ interviewId: 'bad' }));
      const logs = worker.logs.join('');
      expect(logs).toContain('worker listening');
      expect(logs).not.toContain(WORKER_TOKEN);
      expect(logs).not.toContain('sk-test-fake-key-000000');
      expect(logs).not.toContain('wrong-token-that-is-long');
    } finally {
      await worker.stop();
    }
  }, 150_000);
});
