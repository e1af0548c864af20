import 'vitest';
import type { TestProject } from 'vitest/node';
import { startRedis, type RedisServer } from './redis.ts';

/**
 * One Redis per test run, shared by the test files that do not need to kill it
 * (they isolate themselves with a key prefix). Tests that stop Redis start their own.
 * Three projects use this setup ('default', 'after-builds' and 'e2e', vitest.config.ts), each
 * loading the module apart: the server is held on globalThis of the one main process and stopped by
 * the last teardown.
 */
const holder = globalThis as { __testRedis?: { server: Promise<RedisServer>; users: number } };

export async function setup(project: TestProject): Promise<void> {
  holder.__testRedis ??= { server: startRedis(), users: 0 };
  holder.__testRedis.users++;
  project.provide('redisUrl', (await holder.__testRedis.server).url);
}

export async function teardown(): Promise<void> {
  const shared = holder.__testRedis;
  if (!shared || --shared.users > 0) return;
  holder.__testRedis = undefined;
  await (await shared.server).stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}
