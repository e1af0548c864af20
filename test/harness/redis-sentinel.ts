import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort, waitFor } from './ports.ts';
import { startRedis, type RedisServer } from './redis.ts';

/**
 * A Redis that Sentinel fails over, all real: a persistent master, one replica and one Sentinel
 * (redis-server in sentinel mode) on loopback. One Sentinel with a quorum of 1 makes the failover
 * deterministic (no election between Sentinels); the worker's side of it is the same as with three.
 */
export interface SentinelGroup {
  masterName: string;
  sentinelPort: number;
  /** REDIS_SENTINELS for the worker. */
  sentinels: string;
  /** The address Sentinel now names as master. */
  masterPort(): Promise<number>;
  /** Kills the current master (SIGKILL) and waits until Sentinel has promoted the replica. */
  killMaster(): Promise<{ oldPort: number; newPort: number }>;
  stop(): Promise<void>;
}

export async function startSentinelGroup(masterName = 'voice-test'): Promise<SentinelGroup> {
  const master = await startRedis({ persistent: true });
  const replica = await startRedis({ persistent: true, args: ['--replicaof', '127.0.0.1', String(master.port)] });
  const servers: RedisServer[] = [master, replica];
  const sentinelPort = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'redis-sentinel-'));
  const conf = join(dir, 'sentinel.conf');
  writeFileSync(
    conf,
    [
      `port ${sentinelPort}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor ${masterName} 127.0.0.1 ${master.port} 1`,
      `sentinel down-after-milliseconds ${masterName} 1000`,
      `sentinel failover-timeout ${masterName} 5000`,
      `sentinel parallel-syncs ${masterName} 1`,
    ].join('\n') + '\n',
  );
  const sentinel: ChildProcess = spawn('redis-server', [conf, '--sentinel'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  sentinel.stderr?.on('data', (d) => (stderr += d.toString()));
  const admin = new Redis({ port: sentinelPort, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 1 });
  admin.on('error', () => undefined);

  const masterPort = async (): Promise<number> => {
    const reply = (await admin.call('SENTINEL', 'get-master-addr-by-name', masterName)) as [string, string] | null;
    if (!reply) throw new Error(`Sentinel does not know ${masterName} ${stderr}`);
    return Number(reply[1]);
  };
  // Ready when Sentinel has found the replica through the master (it needs both for a failover).
  await waitFor(
    async () => {
      try {
        const replicas = (await admin.call('SENTINEL', 'replicas', masterName)) as string[][];
        return replicas.some((fields) => fields.includes('slave') && !fields.join(' ').includes('disconnected'));
      } catch {
        return false;
      }
    },
    { timeoutMs: 20_000, what: `Sentinel to see the replica of ${masterName} ${stderr}` },
  );
  const replicaClient = new Redis(replica.url, { maxRetriesPerRequest: 1 });
  try {
    await waitFor(async () => (await replicaClient.info('replication')).includes('master_link_status:up'), {
      timeoutMs: 20_000,
      what: 'the replica to sync',
    });
  } finally {
    replicaClient.disconnect();
  }

  return {
    masterName,
    sentinelPort,
    sentinels: `127.0.0.1:${sentinelPort}`,
    masterPort,
    async killMaster() {
      const oldPort = await masterPort();
      const victim = servers.find((s) => s.port === oldPort);
      if (!victim) throw new Error(`no server of this group listens on ${oldPort}`);
      await victim.kill();
      let newPort = oldPort;
      await waitFor(async () => (newPort = await masterPort()) !== oldPort, { timeoutMs: 20_000, what: 'Sentinel to promote the replica' });
      return { oldPort, newPort };
    },
    async stop() {
      admin.disconnect();
      await new Promise<void>((resolve) => {
        if (sentinel.exitCode !== null) return resolve();
        sentinel.once('exit', () => resolve());
        sentinel.kill('SIGKILL');
      });
      await Promise.all(servers.map((s) => s.stop()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
