import { Redis, type RedisOptions } from 'ioredis';
import { z } from 'zod';
import type { Logger } from '../lib/log.ts';
import { logRedisRefusals } from './redis-refusals.ts';
import { redisClientOptions, type RedisSettings } from './redis-connection.ts';
import { CLAIM, REAP, REGISTER_IDLE, TRANSITION, UPDATE_EXISTING, WITHDRAW } from './pool-scripts.ts';
import { parseStoredSpawn, type StoredSpawn } from './spawn-request.ts';

/**
 * Session state and the warm pool in Redis, shared by every replica. Commands fail fast when
 * Redis is away (no offline queue, a command timeout), so a spawn never hangs past its budget;
 * ioredis reconnects by itself. Key layout and scripts: docs/worker.md, pool-scripts.ts.
 */
export type SessionState = 'assigned' | 'running' | 'completed' | 'failed';

export interface SessionRecord {
  sessionId: string;
  interviewId: string;
  slot: string;
  pod: string;
  roomName: string;
  roomUrl: string;
  roomExp: number;
  claimedAt: number;
  /**
   * 1 for the first claim of a session, one more for each claim after a failure (a retry). Not the
   * service's connect attempt (the spawn's `serviceAttempt`). Stored as the hash field `attempt`,
   * the name records already in Redis carry.
   */
  claimNumber: number;
  state: SessionState;
  /** The spawn as stored with the claim, read once here; null when it cannot be read (a damaged record). */
  spawn: StoredSpawn | null;
  traceId: string;
  spanId: string;
  outcome?: string;
}

/**
 * A session hash as read from Redis: checked, so a damaged or foreign record reads as absent, and
 * its spawn parsed once for everyone who reads the record.
 */
const SessionHash = z
  .object({
    sessionId: z.string().min(1),
    interviewId: z.string(),
    slot: z.string(),
    pod: z.string(),
    roomName: z.string(),
    roomUrl: z.string(),
    roomExp: z.coerce.number().finite(),
    claimedAt: z.coerce.number().finite(),
    attempt: z.coerce.number().int().default(1),
    state: z.enum(['assigned', 'running', 'completed', 'failed']),
    spawn: z.string().transform(parseStoredSpawn),
    traceId: z.string().default(''),
    spanId: z.string().default(''),
    outcome: z.string().optional(),
  })
  .transform(({ attempt, ...fields }): SessionRecord => ({ ...fields, claimNumber: attempt }));

export interface ClaimInput {
  sessionId: string;
  interviewId: string;
  spawnJson: string;
  nowSeconds: number;
  recordTtlSeconds: number;
  minRoomSeconds: number;
  traceId: string;
  spanId: string;
}

export type ClaimResult =
  | { kind: 'none' }
  | { kind: 'claimed' | 'existing'; roomName: string; roomUrl: string; roomExp: number; claimedAt: number; slot: string; pod: string };

export interface IdleSlot {
  slotId: string;
  roomName: string;
  roomUrl: string;
  roomExp: number;
}

type ScriptRedis = Redis & {
  claimSlot(...args: Array<string | number>): Promise<string[]>;
  registerIdle(...args: Array<string | number>): Promise<number>;
  withdrawSlots(...args: Array<string | number>): Promise<string[]>;
  reapPod(...args: Array<string | number>): Promise<string[]>;
  transition(...args: Array<string | number>): Promise<number>;
  updateExisting(...args: Array<string | number>): Promise<number>;
};

export function redisOptions(commandTimeoutMs: number): RedisOptions {
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: commandTimeoutMs,
    connectTimeout: 2000,
    retryStrategy: (attempt: number) => Math.min(100 * attempt, 1000),
  };
}

export class RedisPool {
  readonly redis: ScriptRedis;
  /** A second connection for the blocking inbox read, so it never delays a claim. */
  private readonly blocking: Redis;
  readonly prefix: string;

  /** `redis`: a plain redis:// URL, or the settings of a Sentinel-managed or TLS Redis (redis-connection.ts). */
  constructor(options: { redis: string | RedisSettings; keyPrefix: string; commandTimeoutMs: number; pod?: string; log?: Logger }) {
    // One hash tag for every key, so a Redis Cluster keeps them on one shard and the scripts stay legal.
    this.prefix = `{${options.keyPrefix}}`;
    // Named connections make `CLIENT LIST` readable: which pod, which role.
    const name = (role: string) => (options.pod ? { connectionName: `voice-worker:${role}:${options.pod}` } : {});
    const settings: RedisSettings =
      typeof options.redis === 'string'
        ? { url: options.redis, username: undefined, password: undefined, tlsCaFile: undefined, sentinel: null }
        : options.redis;
    const connect = (extra: RedisOptions) =>
      new Redis(redisClientOptions(settings, { ...redisOptions(options.commandTimeoutMs), ...extra }));
    this.redis = connect(name('main')) as ScriptRedis;
    // No client-side timeout on the blocking read: a client timer that fires just before a late
    // reply would drop a popped assignment. Redis itself ends each BLPOP after its timeout.
    this.blocking = connect({ commandTimeout: undefined, ...name('inbox') });
    for (const client of [this.redis, this.blocking]) client.on('error', () => undefined); // state is read via `ready`
    // Why it is not ready, though, is said once (a wrong password, an untrusted certificate).
    if (options.log) logRedisRefusals(this.redis, options.log, 'main');
    this.redis.defineCommand('claimSlot', { numberOfKeys: 2, lua: CLAIM });
    this.redis.defineCommand('registerIdle', { numberOfKeys: 3, lua: REGISTER_IDLE });
    this.redis.defineCommand('withdrawSlots', { numberOfKeys: 1, lua: WITHDRAW });
    this.redis.defineCommand('reapPod', { numberOfKeys: 2, lua: REAP });
    this.redis.defineCommand('transition', { numberOfKeys: 1, lua: TRANSITION });
    this.redis.defineCommand('updateExisting', { numberOfKeys: 1, lua: UPDATE_EXISTING });
  }

  get ready(): boolean {
    return this.redis.status === 'ready';
  }

  key(...parts: string[]): string {
    return [this.prefix, ...parts].join(':');
  }

  async claim(input: ClaimInput): Promise<ClaimResult> {
    const reply = await this.redis.claimSlot(
      this.key('session', input.sessionId),
      this.key('idle'),
      this.prefix,
      input.sessionId,
      input.nowSeconds,
      input.spawnJson,
      input.recordTtlSeconds,
      input.traceId,
      input.spanId,
      input.interviewId,
      input.minRoomSeconds,
    );
    if (reply[0] === 'none') return { kind: 'none' };
    const [kind, roomName, roomUrl, roomExp, claimedAt, slot, pod] = reply as [string, string, string, string, string, string, string];
    return { kind: kind as 'claimed' | 'existing', roomName, roomUrl, roomExp: Number(roomExp), claimedAt: Number(claimedAt), slot, pod };
  }

  async registerIdle(pod: string, slot: IdleSlot, force: boolean): Promise<boolean> {
    const done = await this.redis.registerIdle(
      this.key('slot', slot.slotId),
      this.key('idle'),
      this.key('pod', pod, 'slots'),
      slot.slotId,
      pod,
      slot.roomName,
      slot.roomUrl,
      slot.roomExp,
      force ? '1' : '0',
    );
    return done === 1;
  }

  async withdraw(slotIds: string[]): Promise<string[]> {
    if (slotIds.length === 0) return [];
    return this.redis.withdrawSlots(this.key('idle'), this.prefix, ...slotIds);
  }

  async heartbeat(pod: string, ttlMs: number): Promise<void> {
    await this.redis
      .multi()
      .set(this.key('pod', pod, 'alive'), '1', 'PX', ttlMs)
      .sadd(this.key('pods'), pod)
      .exec();
  }

  /** A clean exit: the pod and its slot records go, so nothing of it is left for a reaper. */
  async leave(pod: string): Promise<void> {
    const slots = await this.redis.smembers(this.key('pod', pod, 'slots'));
    const tx = this.redis
      .multi()
      .del(this.key('pod', pod, 'alive'))
      .srem(this.key('pods'), pod);
    for (const slot of slots) tx.lrem(this.key('idle'), 0, slot).del(this.key('slot', slot));
    await tx.del(this.key('pod', pod, 'slots'), this.key('pod', pod, 'inbox')).exec();
  }

  async pods(): Promise<string[]> {
    return this.redis.smembers(this.key('pods'));
  }

  async isAlive(pod: string): Promise<boolean> {
    return (await this.redis.exists(this.key('pod', pod, 'alive'))) === 1;
  }

  async reap(pod: string, failureOutcomeJson: string): Promise<string[]> {
    return this.redis.reapPod(this.key('pods'), this.key('idle'), this.prefix, pod, failureOutcomeJson);
  }

  async idleCount(): Promise<number> {
    return this.redis.llen(this.key('idle'));
  }

  /** Waits up to `timeoutSeconds` for the next session assigned to this pod's slots. */
  async nextAssignment(pod: string, timeoutSeconds: number): Promise<string | null> {
    const reply = await this.blocking.blpop(this.key('pod', pod, 'inbox'), timeoutSeconds);
    return reply ? reply[1] : null;
  }

  async session(sessionId: string): Promise<SessionRecord | null> {
    const parsed = SessionHash.safeParse(await this.redis.hgetall(this.key('session', sessionId)));
    return parsed.success ? parsed.data : null;
  }

  /** The session a slot is busy with, if Redis says it is busy. */
  async busySession(slotId: string): Promise<string | null> {
    const [state, session] = await this.redis.hmget(this.key('slot', slotId), 'state', 'session');
    return state === 'busy' && session ? session : null;
  }

  async transition(sessionId: string, from: SessionState, to: SessionState): Promise<boolean> {
    return (await this.redis.transition(this.key('session', sessionId), from, to)) === 1;
  }

  async finish(sessionId: string, state: 'completed' | 'failed', outcomeJson: string, reported: boolean): Promise<void> {
    await this.redis.updateExisting(
      this.key('session', sessionId),
      'state',
      state,
      'outcome',
      outcomeJson,
      'reported',
      reported ? '1' : '0',
    );
  }

  async markReported(sessionId: string): Promise<void> {
    await this.redis.updateExisting(this.key('session', sessionId), 'reported', '1');
  }

  async close(): Promise<void> {
    this.blocking.disconnect();
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
