import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../lib/log.ts';
import type { WorkerConfig } from './config.ts';
import { Heartbeat } from './heartbeat.ts';
import { OutcomeOutbox } from './outbox.ts';
import { RedisPool } from './pool.ts';
import { openWorkerRooms, roomTtlSeconds as roomLifetime } from './rooms/registry.ts';
import { createManagementServer } from './management.ts';
import { createEdge } from './server.ts';
import { SessionCoordinator } from './session.ts';
import { SlotManager } from './slots.ts';
import { bearerAuth, spawnHandler } from './spawn.ts';
import { createMetrics, type WorkerMetrics } from './telemetry/metrics.ts';
import { FailureReason } from '../lib/failure-reasons.ts';

/**
 * The composition root of one worker: config and dependencies in, a running worker out.
 * main.ts owns the process (signals, exit); tests and benchmarks may call this directly.
 */
export interface RunningWorker {
  port: number;
  /** The management port: /metrics, /healthz, /readyz. */
  metricsPort: number;
  /** This process's identity in Redis: POD_NAME plus a random incarnation id. */
  instance: string;
  metrics: WorkerMetrics;
  ready(): boolean;
  /** Readiness false at once, idle slots leave the pool, live sessions get the grace period. */
  drain(): Promise<void>;
  close(): Promise<void>;
}

export async function startWorker(config: Readonly<WorkerConfig>, deps: { log: Logger; env: NodeJS.ProcessEnv }): Promise<RunningWorker> {
  const { log } = deps;
  const metrics = createMetrics();
  // A container restarted under the same POD_NAME is a new incarnation: the dead one's slots and
  // sessions must look dead to the reaper (and be reported failed), not look like ours.
  const instance = `${config.podName}~${randomBytes(4).toString('hex')}`;
  const pool = new RedisPool({
    redis: config.redis,
    keyPrefix: config.redisKeyPrefix,
    commandTimeoutMs: config.spawnBudgetMs,
    pod: instance,
    log,
  });
  const outbox = new OutcomeOutbox({
    pool,
    report: {
      backendUrl: config.backendUrl,
      token: config.workerToken,
      timeoutMs: config.reportTimeoutMs,
      attempts: config.reportAttempts,
    },
    deadlineSeconds: config.outcomeReportDeadlineSeconds,
    maxBackoffMs: config.outcomeRetryMaxSeconds * 1000,
    intervalMs: config.outcomeOutboxPollMs,
    metrics,
    log,
  });
  const edgeRef: { port: number } = { port: config.port };
  // The room transport that ROOM_PROVIDER names (worker/rooms/registry.ts); local rooms are joined by
  // this pod's bots over its loopback address, whatever port the edge ended up on.
  const roomSide = await openWorkerRooms(config, {
    log,
    publicUrl: config.publicUrl,
    internalRoomBase: () => `${config.tls ? 'wss' : 'ws'}://127.0.0.1:${edgeRef.port}`,
  });
  const rooms = roomSide.provider;
  const minRoomSeconds = config.joinTimeoutSeconds + config.maxSessionSeconds;
  const roomTtlSeconds = roomLifetime(config, minRoomSeconds);

  let draining = false;
  let roomsReady = false;
  const slots = new SlotManager({
    pod: instance,
    size: config.warmPoolSize,
    sessionsPerProcess: config.botSessionsPerProcess,
    env: deps.env,
    pool,
    rooms,
    roomTtlSeconds,
    minRoomSeconds,
    metrics,
    log,
  });
  const sessions = new SessionCoordinator({
    pod: instance,
    pool,
    slots,
    rooms,
    joinTimeoutSeconds: config.joinTimeoutSeconds,
    maxSessionSeconds: config.maxSessionSeconds,
    outbox,
    metrics,
    log,
  });
  const heartbeat = new Heartbeat({
    pod: instance,
    intervalMs: config.heartbeatIntervalMs,
    ttlMs: config.heartbeatTtlMs,
    pool,
    slots,
    sessions,
    log,
  });
  const ready = () => !draining && roomsReady && heartbeat.healthy;

  const server = createEdge({
    log,
    tls: config.tls,
    bodyLimitBytes: config.spawnBodyLimitBytes,
    auth: bearerAuth(config.workerToken, () => metrics.spawns.inc({ outcome: 'unauthorized' })),
    spawn: spawnHandler({
      pod: config.podName,
      workerToken: config.workerToken,
      pool,
      rooms,
      metrics,
      log,
      accepting: () => !draining && roomsReady,
      retryAfterSeconds: config.retryAfterSeconds,
      recordTtlSeconds: config.sessionRecordTtlSeconds,
      joinTimeoutSeconds: config.joinTimeoutSeconds,
      maxSessionSeconds: config.maxSessionSeconds,
    }),
    rooms: roomSide.server,
    limits: config.publicLimits,
  });
  const management = createManagementServer({ log, metrics, ready, limits: config.managementLimits });
  const listen = (s: typeof server, port: number) =>
    new Promise<number>((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, config.host, () => resolve((s.address() as AddressInfo).port));
    });
  edgeRef.port = await listen(server, config.port);
  const metricsPort = await listen(management, config.metricsPort);

  // The room provider may be unreachable at start; keep trying, and stay not-ready meanwhile.
  const initRooms = async () => {
    for (let tries = 0; !draining; tries++) {
      try {
        await rooms.init();
        roomsReady = true;
        slots.start();
        return;
      } catch (err) {
        log.warn('room provider not reachable yet', { provider: rooms.name, tries, err });
        await new Promise((r) => setTimeout(r, 2000));
      }
    }
  };
  void initRooms();
  heartbeat.start();
  sessions.startInbox();
  outbox.start();
  log.info('worker listening', {
    port: edgeRef.port,
    metricsPort,
    pod: config.podName,
    instance,
    tls: Boolean(config.tls),
    roomProvider: rooms.name,
    warmPoolSize: config.warmPoolSize,
  });

  let drained: Promise<void> | null = null;
  return {
    get port() {
      return edgeRef.port;
    },
    metricsPort,
    instance,
    metrics,
    ready,
    drain() {
      drained ??= (async () => {
        draining = true;
        const withdrawn = await slots.withdraw();
        log.info('draining: idle slots left the pool', { withdrawn, live: sessions.activeCount });
        const deadline = Date.now() + config.drainGraceSeconds * 1000;
        if (!(await sessions.idle(deadline))) {
          log.warn('grace period over: ending the sessions still running', { live: sessions.activeCount });
          slots.interruptAll(FailureReason.worker_shutdown);
          await sessions.idle(Date.now() + 5000);
        }
        await sessions.settleReports();
      })();
      return drained;
    },
    async close() {
      draining = true;
      await sessions.stopInbox();
      await outbox.stop();
      await heartbeat.stop(true);
      await slots.stop();
      roomSide.close();
      for (const s of [server, management]) s.closeAllConnections();
      await Promise.all([server, management].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
      await pool.close();
    },
  };
}
