import { z } from 'zod';
import type { Logger } from '../lib/log.ts';
import type { RedisPool } from './pool.ts';
import { deliverOnce, reportOutcome, type OutcomeReport, type ReportOptions } from './report.ts';
import type { WorkerMetrics } from './telemetry/metrics.ts';

/**
 * Outcome reports that the service has not acknowledged yet, kept in Redis so that neither a
 * long backend outage nor a worker restart loses one (docs/worker.md "Outcome outbox").
 * `{p}:outbox` is a sorted set of session ids by next-try time (ms); `{p}:outbox:item:<id>` holds
 * the report and expires at its deadline, so nothing here lives forever. Any replica drains the
 * shared outbox: a claim moves an item's next-try time past the delivery timeout (a lease), so
 * two replicas never send it at once; a crash mid-send only delays it by the lease.
 */
/**
 * KEYS: outbox, item. ARGV: id, item, item TTL ms, next-try ms. The outbox outlives its longest item
 * by an hour, so a claim still sees (and counts) an item that expired unacknowledged.
 */
const ENQUEUE = `
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[1])
local ttl = tonumber(ARGV[3]) + 3600000
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1
`;

/** KEYS: outbox. ARGV: now ms, lease ms, limit, item key prefix. Returns id, item (or '' once expired) pairs. */
const CLAIM = `
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
local out = {}
for _, id in ipairs(due) do
  local item = redis.call('GET', ARGV[4] .. id)
  if item then
    redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), id)
  else
    redis.call('ZREM', KEYS[1], id)
    item = ''
  end
  table.insert(out, id)
  table.insert(out, item)
end
return out
`;

/** KEYS: outbox, item. ARGV: id, the item as claimed, new item ('' to delete), next-try ms. Only if unchanged since the claim. */
const SETTLE = `
if redis.call('GET', KEYS[2]) ~= ARGV[2] then return 0 end
if ARGV[3] == '' then
  redis.call('DEL', KEYS[2])
  redis.call('ZREM', KEYS[1], ARGV[1])
else
  redis.call('SET', KEYS[2], ARGV[3], 'KEEPTTL')
  redis.call('ZADD', KEYS[1], ARGV[4], ARGV[1])
end
return 1
`;

const Item = z.object({
  sessionId: z.string().min(1),
  outcome: z.union([
    z.object({ status: z.literal('completed'), response: z.object({ transcriptKey: z.string(), summary: z.string() }) }),
    z.object({ status: z.literal('failed'), reason: z.string(), message: z.string() }),
  ]),
  // The service's connect attempt, under the name items already stored in Redis carry.
  attempt: z.number().int().optional(),
  reportToken: z.string().nullable(),
  deadlineMs: z.number(),
  tries: z.number().int().nonnegative(),
});
type Item = z.infer<typeof Item>;

export interface OutboxOptions {
  pool: RedisPool;
  report: Omit<ReportOptions, 'log' | 'metrics'>;
  deadlineSeconds: number;
  maxBackoffMs: number;
  intervalMs: number;
  metrics: WorkerMetrics;
  log: Logger;
}

type OutboxRedis = RedisPool['redis'] & {
  outboxEnqueue(...args: Array<string | number>): Promise<number>;
  outboxClaim(...args: Array<string | number>): Promise<string[]>;
  outboxSettle(...args: Array<string | number>): Promise<number>;
};

export class OutcomeOutbox {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private readonly o: OutboxOptions;
  private readonly redis: OutboxRedis;

  constructor(o: OutboxOptions) {
    this.o = o;
    this.redis = o.pool.redis as OutboxRedis;
    this.redis.defineCommand('outboxEnqueue', { numberOfKeys: 2, lua: ENQUEUE });
    this.redis.defineCommand('outboxClaim', { numberOfKeys: 1, lua: CLAIM });
    this.redis.defineCommand('outboxSettle', { numberOfKeys: 2, lua: SETTLE });
  }

  private get key(): string {
    return this.o.pool.key('outbox');
  }

  private itemKey(sessionId: string): string {
    return this.o.pool.key('outbox', 'item', sessionId);
  }

  /** Sends at start and then on a timer: reports left by an earlier process or another replica. */
  start(): void {
    this.kick();
    this.timer = setInterval(() => this.kick(), this.o.intervalMs);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /**
   * Keeps the report (retrying through a short Redis outage), then tries it at once. If Redis
   * cannot take it at all, it is reported in-process with a few retries as a last resort.
   */
  async submit(report: OutcomeReport, finishedAtMs = Date.now()): Promise<void> {
    const item = toItem(report, finishedAtMs + this.o.deadlineSeconds * 1000);
    for (let storeTries = 0; storeTries < 60; storeTries++) {
      try {
        const ttlMs = Math.max(1, item.deadlineMs - Date.now());
        await this.redis.outboxEnqueue(this.key, this.itemKey(report.sessionId), report.sessionId, JSON.stringify(item), ttlMs, Date.now());
        // A pass of our own, bounded (the claim's lease keeps it from racing the timer's pass).
        await this.drain().catch((err: unknown) => this.o.log.debug('outbox drain failed (Redis away?)', { err }));
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    this.o.log.error('could not keep an outcome report in Redis; reporting it without a durable copy', { sessionId: report.sessionId });
    await reportOutcome(report, { ...this.o.report, log: this.o.log, metrics: this.o.metrics });
  }

  /** The timer's pass: skipped while the previous one still runs. */
  private kick(): void {
    if (this.running) return;
    this.running = this.drain()
      .catch((err: unknown) => this.o.log.debug('outbox drain failed (Redis away?)', { err }))
      .finally(() => (this.running = null));
  }

  private async drain(): Promise<void> {
    const lease = this.o.report.timeoutMs + 5000;
    for (;;) {
      const reply = await this.redis.outboxClaim(this.key, Date.now(), lease, 16, this.itemKey(''));
      if (reply.length === 0) break;
      await Promise.all(pairs(reply).map(([id, raw]) => this.deliver(id, raw)));
    }
    this.o.metrics.outcomeBacklog.set(await this.redis.zcard(this.key));
  }

  private async deliver(sessionId: string, raw: string): Promise<void> {
    const item = parseItem(raw);
    if (!item) {
      if (raw) await this.redis.outboxSettle(this.key, this.itemKey(sessionId), sessionId, raw, '', 0);
      this.o.metrics.reports.inc({ result: 'expired' });
      this.o.log.error('an outcome report passed its deadline (or was unreadable) unacknowledged; dropped', { sessionId });
      return;
    }
    const result = await deliverOnce(reportOf(item), { ...this.o.report, log: this.o.log });
    if (result === 'retry' && Date.now() < item.deadlineMs) {
      const next: Item = { ...item, tries: item.tries + 1 };
      const delay = Math.min(this.o.maxBackoffMs, 500 * 2 ** Math.min(item.tries, 20));
      await this.redis.outboxSettle(this.key, this.itemKey(sessionId), sessionId, raw, JSON.stringify(next), Date.now() + delay);
      return;
    }
    await this.redis.outboxSettle(this.key, this.itemKey(sessionId), sessionId, raw, '', 0);
    this.o.metrics.reports.inc({ result: result === 'ok' ? 'ok' : result === 'refused' ? 'refused' : 'expired' });
    if (result === 'ok') await this.o.pool.markReported(sessionId).catch(() => undefined);
    else
      this.o.log.error('outcome report dropped', {
        sessionId,
        why: result === 'refused' ? 'the service refused it' : 'its deadline passed',
      });
  }
}

function toItem({ serviceAttempt, ...report }: OutcomeReport, deadlineMs: number): Item {
  return { ...report, ...(serviceAttempt === undefined ? {} : { attempt: serviceAttempt }), deadlineMs, tries: 0 };
}

function reportOf({ attempt, sessionId, outcome, reportToken }: Item): OutcomeReport {
  return { sessionId, outcome, reportToken, ...(attempt === undefined ? {} : { serviceAttempt: attempt }) };
}

function pairs(reply: string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i + 1 < reply.length; i += 2) out.push([reply[i]!, reply[i + 1]!]);
  return out;
}

function parseItem(raw: string): Item | null {
  try {
    const parsed = Item.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
