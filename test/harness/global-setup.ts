import 'vitest';
import type { TestProject } from 'vitest/node';
import { startRedis, type RedisServer } from './redis.ts';

/**
 * One Redis per test run, shared by the test files that do not need to kill it
 * (they isolate themselves with a key prefix). Tests that stop Redis start their own.
 */
let redis: RedisServer | undefined;

export async function setup(project: TestProject): Promise<void> {
  redis = await startRedis();
  project.provide('redisUrl', redis.url);
}

export async function teardown(): Promise<void> {
  await redis?.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}
