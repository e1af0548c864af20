import { createLogger } from '../lib/log.ts';
import { ConfigError, loadConfig } from './config.ts';
import { startTracing } from './telemetry/tracing.ts';
import { startWorker } from './worker.ts';
import { needsTurnModels, resolveTurnModels } from './bot/turns/models.ts';

/**
 * Entry point (`npm run worker`). The only file that touches signals and the exit code.
 * SIGTERM/SIGINT: drain (not ready at once, no new spawns, live sessions get DRAIN_GRACE_SECONDS),
 * then close and exit 0. A bad configuration exits 1 with one line naming the variable.
 */
const log = createLogger({ name: 'worker' });

// Every handler of outside bytes validates and catches at its own boundary; reaching these means
// a bug. Say so and end on purpose (the pod restarts, the reaper fails the sessions over) rather
// than keep running in an unknown state.
for (const event of ['uncaughtException', 'unhandledRejection'] as const) {
  process.on(event, (err: unknown) => {
    log.error(`${event}: exiting so that the process restarts`, { err });
    process.exit(70);
  });
}

let config;
try {
  config = loadConfig(process.env);
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`worker: configuration error: ${err.message}\n`);
    process.exit(1);
  }
  throw err;
}
// The turn models are files of their own (scripts/turn-models.sh, or the image): a pod without
// them fails here with what to do, rather than in every bot it starts.
if (needsTurnModels(config.turns.engines)) {
  try {
    resolveTurnModels(config.turns.engines.modelsDir);
  } catch (err) {
    process.stderr.write(`worker: ${(err as Error).message}\n`);
    process.exit(1);
  }
}

const tracing = startTracing(process.env);
const worker = await startWorker(config, { log, env: process.env });

let stopping = false;
const shutdown = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  log.info('shutting down', { signal });
  await worker.drain();
  await worker.close();
  await tracing.shutdown();
  log.info('stopped');
  process.exit(0);
};
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
