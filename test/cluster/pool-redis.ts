import type { KubeCli } from './kube-cli.ts';
import { POOL_NAMESPACE } from './pool-fixtures.ts';

/**
 * The warm pool as the workers keep it in the in-cluster Redis (docs/worker.md "Pool in Redis"), read
 * with redis-cli inside the Redis pod: which worker incarnation ("<pod>~<id>") runs a session, which
 * incarnations are registered, their slots and the idle list.
 */
export interface PoolRedis {
  /** The session's record: pod (incarnation), slot, state. */
  session(sessionId: string): Promise<{ pod?: string; slot?: string; state?: string }>;
  pods(): Promise<string[]>;
  podSlots(instance: string): Promise<string[]>;
  slotExists(slot: string): Promise<boolean>;
  idle(): Promise<string[]>;
}

export function poolRedis(k: KubeCli, pool: string): PoolRedis {
  // The operator's REDIS_KEY_PREFIX (C7), inside the worker's {hash tag}.
  const prefix = `{voice:${POOL_NAMESPACE}:${pool}}`;
  const cli = async (...args: string[]): Promise<string[]> => {
    const out = await k.kubectl(['exec', '-n', POOL_NAMESPACE, 'deploy/redis', '--', 'redis-cli', '--raw', ...args]);
    // One line per value; a missing field is an empty line, so only the final newline is dropped.
    const lines = out.split('\n');
    if (lines.at(-1) === '') lines.pop();
    return lines;
  };
  // Members and list items are never empty; an empty set prints one empty line.
  const members = async (...args: string[]): Promise<string[]> => (await cli(...args)).filter((line) => line !== '');
  return {
    async session(sessionId) {
      const [pod, slot, state] = await cli('HMGET', `${prefix}:session:${sessionId}`, 'pod', 'slot', 'state');
      return { pod: pod || undefined, slot: slot || undefined, state: state || undefined };
    },
    pods: () => members('SMEMBERS', `${prefix}:pods`),
    podSlots: (instance) => members('SMEMBERS', `${prefix}:pod:${instance}:slots`),
    slotExists: async (slot) => (await cli('EXISTS', `${prefix}:slot:${slot}`))[0] === '1',
    idle: () => members('LRANGE', `${prefix}:idle`, '0', '-1'),
  };
}

/** The pod name of a worker incarnation ("<pod>~<random>"). */
export const podOf = (instance: string): string => instance.split('~')[0]!;
