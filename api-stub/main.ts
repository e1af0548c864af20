import { createServer } from 'node:http';
import { loadConfig } from './config.ts';
import { openDatabase } from './db/database.ts';
import { createApp } from './app.ts';
import { applySeed, loadSeedFile } from './seed.ts';
import { createLogger } from '../lib/log.ts';
import { systemClock } from '../lib/time.ts';
import { assertKeyForSelfHost, loadKeyProvider } from './crypto/key-provider.ts';
import { createRuntime } from './runtime.ts';
import { countSelfHostWorkspaces } from './self-host/settings-store.ts';
import { selfHostSeedHooks } from './self-host/seed-hook.ts';
import { installClientErrorHandler } from '../lib/http.ts';
import { countPlaintextEndpointSecrets, sealStoredEndpointSecrets } from './webhooks/endpoint-secrets.ts';

/**
 * The only file that listens: read config, open and migrate the database, apply the seed,
 * serve, and close cleanly on SIGTERM/SIGINT.
 */
const log = createLogger({ name: 'api-stub' });

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const db = openDatabase(config.dbPath);
  const keys = loadKeyProvider(process.env, log);
  if (config.seedPath) {
    const seed = loadSeedFile(config.seedPath);
    const summary = applySeed(db, seed, systemClock(), await selfHostSeedHooks(seed, keys.provider));
    log.info('seed applied', { seed: config.seedPath, ...summary });
    if (summary.selfHostSkipped.length > 0) log.warn('selfHost settings in the seed were not applied', { workspaces: summary.selfHostSkipped });
  }
  // Stored tokens without a key would fail every spawn: refuse to start instead.
  assertKeyForSelfHost(keys, countSelfHostWorkspaces(db));
  // Webhook signing secrets stored in clear (older rows) are sealed now; without a key they stay so.
  if (keys.provider) {
    const sealed = await sealStoredEndpointSecrets(db, keys.provider);
    if (sealed > 0) log.info('webhook signing secrets sealed at rest', { endpoints: sealed });
  } else if (countPlaintextEndpointSecrets(db) > 0) {
    log.warn('webhook signing secrets are stored unencrypted: set PIPELINE_KEK (base64 of 32 bytes) to seal them at rest');
  }
  const runtime = createRuntime(config, { db, clock: systemClock, log, keys: keys.provider });
  const app = createApp(config, { db, clock: systemClock, log, routing: runtime.routing });
  runtime.start();
  const server = createServer(app);
  installClientErrorHandler(server);
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
    }, Math.max(5000, config.routing.webhookTimeoutMs + 1000));
    force.unref();
    // Webhook attempts in flight finish and are recorded before the database closes.
    const background = runtime.stop();
    server.close(() => {
      void background.then(() => {
        db.close();
        log.info('stopped');
        process.exit(0);
      });
    });
    server.closeIdleConnections();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  log.error('api-stub failed to start', { err });
  process.exit(1);
});
