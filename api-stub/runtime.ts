import type { Logger } from '../lib/log.ts';
import type { Clock } from '../lib/time.ts';
import type { ApiStubConfig } from './config.ts';
import { createSpawnLimiter } from './connect/spawn-limiter.ts';
import { createHostedCapacity } from './connect/hosted-share.ts';
import type { KeyProvider } from './crypto/key-provider.ts';
import type { Database } from './db/database.ts';
import { loadTrustedCas } from './outbound/trust.ts';
import type { RoutingDeps } from './routing-deps.ts';
import { createSweeper, type Sweeper } from './sessions/sweeper.ts';
import { createPruner, type Pruner } from './retention/pruner.ts';
import { createDispatcher, type Dispatcher } from './webhooks/dispatcher.ts';

/**
 * The api-stub's background work beside the HTTP server: the webhook outbox dispatcher, the
 * expiry sweeper and the retention pruner, plus the routing dependencies the routes share with them. main.ts starts and stops
 * it; tests do the same to control when deliveries and sweeps happen.
 */
export interface Runtime {
  routing: RoutingDeps;
  dispatcher: Dispatcher;
  sweeper: Sweeper;
  pruner: Pruner;
  start(): void;
  /** Stops sweeping, pruning and claiming; waits for webhook attempts in flight and a pruning pass. */
  stop(): Promise<void>;
}

export function createRuntime(
  config: Readonly<ApiStubConfig>,
  deps: { db: Database; clock: Clock; log: Logger; keys: KeyProvider | null },
): Runtime {
  const r = config.routing;
  const ca = loadTrustedCas(r.pipelineExtraCaFile);
  const policy = { allowHosts: r.egressAllowHosts };
  const dispatcher = createDispatcher({
    db: deps.db,
    clock: deps.clock,
    log: deps.log.child({ part: 'webhooks' }),
    policy,
    keys: deps.keys,
    ...(ca ? { ca } : {}),
    timeoutMs: r.webhookTimeoutMs,
    retrySchedule: r.webhookRetrySchedule,
    pollIntervalMs: r.webhookPollIntervalMs,
  });
  const sweeper = createSweeper({
    db: deps.db,
    clock: deps.clock,
    log: deps.log.child({ part: 'sweeper' }),
    intervalMs: r.sweepIntervalMs,
    startedGraceMs: r.startedSessionGraceSeconds * 1000,
    onExpired: () => dispatcher.wake(),
  });
  const pruner = createPruner({
    db: deps.db,
    clock: deps.clock,
    log: deps.log.child({ part: 'retention' }),
    retention: config.retention,
    idempotencyTtlMs: config.idempotencyTtlSeconds * 1000,
  });
  const routing: RoutingDeps = {
    keys: deps.keys,
    policy,
    ...(ca ? { ca } : {}),
    limiter: createSpawnLimiter(r.spawnMaxInFlightPerWorkspace),
    hostedCapacity: createHostedCapacity(r.hostedPipelineCapacity),
    wakeOutbox: () => dispatcher.wake(),
  };
  return {
    routing,
    dispatcher,
    sweeper,
    pruner,
    start() {
      dispatcher.start();
      sweeper.start();
      pruner.start();
    },
    async stop() {
      sweeper.stop();
      await Promise.all([dispatcher.stop(), pruner.stop()]);
    },
  };
}
