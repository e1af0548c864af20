import type { AddressInfo } from 'node:net';
import { createLogger } from '../lib/log.ts';
import { ConfigError } from '../lib/env.ts';
import { loadSpeechConfig } from './config.ts';
import { loadSpeechEngine } from './engine.ts';
import { createSpeechManagementServer } from './management.ts';
import { createSpeechMetrics } from './metrics.ts';
import { MissingModelsError, resolveSpeechModels } from './models.ts';
import { createSpeechServer } from './server.ts';
import { createSpeechService } from './service.ts';
import { startSpeechTracing } from './telemetry.ts';

/**
 * Entry point of the speech server (`npm run speech`, or `node speech/main.ts` in the worker
 * image). The only file that touches signals and the exit code: a bad configuration or missing
 * models exit 1 with one line saying what to do; SIGTERM/SIGINT stop taking requests, let the
 * ones in flight finish (up to 10 s), and exit 0. Prints one "listening" line with both ports.
 */
const log = createLogger({ name: 'speech' });
for (const event of ['uncaughtException', 'unhandledRejection'] as const) {
  process.on(event, (err: unknown) => {
    log.error(`${event}: exiting so that the process restarts`, { err });
    process.exit(70);
  });
}

let config;
let files;
try {
  config = loadSpeechConfig(process.env);
  files = resolveSpeechModels(config.modelsDir, config.espeakDataDir);
} catch (err) {
  if (err instanceof ConfigError || err instanceof MissingModelsError) {
    process.stderr.write(`speech: ${err instanceof ConfigError ? 'configuration error: ' : ''}${err.message}\n`);
    process.exit(1);
  }
  throw err;
}

const tracing = startSpeechTracing(process.env);
const metrics = createSpeechMetrics();
const startedAt = performance.now();
const engine = await loadSpeechEngine(files, { threads: config.threads });
log.info('models loaded', {
  seconds: Number(((performance.now() - startedAt) / 1000).toFixed(2)),
  rssMiB: Math.round(process.memoryUsage().rss / 2 ** 20),
});
const service = createSpeechService({
  engine,
  metrics,
  log,
  sttConcurrency: config.sttConcurrency,
  ttsConcurrency: config.ttsConcurrency,
  queueCapacity: config.queueCapacity,
});
let ready = true;
const { server, closeSessions } = createSpeechServer({ config, service, metrics, log });
const management = createSpeechManagementServer({ metrics, ready: () => ready, log, limits: config.managementLimits });
await new Promise<void>((resolve) => server.listen(config.port, config.host, resolve));
await new Promise<void>((resolve) => management.listen(config.metricsPort, config.host, resolve));
log.info('listening', { port: (server.address() as AddressInfo).port, metricsPort: (management.address() as AddressInfo).port });

let stopping = false;
const shutdown = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  ready = false;
  log.info('shutting down', { signal });
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  closeSessions();
  server.closeIdleConnections();
  await Promise.race([closed, new Promise((r) => setTimeout(r, 10_000).unref())]);
  management.close();
  await tracing.shutdown();
  log.info('stopped');
  process.exit(0);
};
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
