import { createServer } from 'node:http';
import { loadConfig } from './config.ts';
import { openDatabase } from './db/database.ts';
import { createApp } from './app.ts';
import { applySeed, loadSeedFile } from './seed.ts';
import { createLogger } from '../lib/log.ts';
import { systemClock } from '../lib/time.ts';

/**
 * The only file that listens: read config, open and migrate the database, apply the seed,
 * serve, and close cleanly on SIGTERM/SIGINT.
 */
const log = createLogger({ name: 'api-stub' });

function main(): void {
  const config = loadConfig(process.env);
  const db = openDatabase(config.dbPath);
  if (config.seedPath) {
    const summary = applySeed(db, loadSeedFile(config.seedPath), systemClock());
    log.info('seed applied', { seed: config.seedPath, ...summary });
    if (summary.selfHostSkipped.length > 0) log.warn('selfHost settings in the seed were not applied', { workspaces: summary.selfHostSkipped });
  }
  const app = createApp(config, { db, clock: systemClock, log });
  const server = createServer(app);
  server.listen(config.port, config.host, () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    log.info('api-stub listening', { url: `http://${config.host}:${port}`, db: config.dbPath });
  });

  let closing = false;
  const shutdown = (signal: string): void => {
    if (closing) return;
    closing = true;
    log.info('shutting down', { signal });
    const force = setTimeout(() => {
      log.warn('connections did not close in time; exiting');
      db.close();
      process.exit(0);
    }, 5000);
    force.unref();
    server.close(() => {
      db.close();
      log.info('stopped');
      process.exit(0);
    });
    server.closeIdleConnections();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

try {
  main();
} catch (err) {
  log.error('api-stub failed to start', { err });
  process.exit(1);
}
