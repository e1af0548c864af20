import { createServer } from 'node:http';
import { ConfigError, loadConfig } from './config.ts';
import { openDatabase } from './db/database.ts';
import { createApp } from './app.ts';
import { applySeed, loadSeedFile } from './seed.ts';
import { createLogger } from '../lib/log.ts';
import { systemClock } from '../lib/time.ts';
import { assertKeyForMode, assertKeyForSelfHost, loadKeyProvider } from './crypto/key-provider.ts';
import { createRuntime } from './runtime.ts';
import { countSelfHostWorkspaces } from './self-host/settings-store.ts';
import { selfHostSeedHooks } from './self-host/seed-hook.ts';
import { installClientErrorHandler } from '../lib/http.ts';
import { capConnections, serverTimeoutOptions } from '../lib/listen-limits.ts';
import { describeListenError, exitAtStartup, exitOnUncaught } from '../lib/process-exit.ts';
import { countPlaintextEndpointSecrets, sealStoredEndpointSecrets } from './webhooks/endpoint-secrets.ts';

/**
 * The only file that listens: read config, open and migrate the database, apply the seed,
 * serve, and close cleanly on SIGTERM/SIGINT. A failure to start is one line on stderr and exit 1
 * (a bad variable, no key in production, a port in use); a fault that reaches the top ends with 70.
 */
const log = createLogger({ name: 'api-stub' });
exitOnUncaught(log);

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const keys = loadKeyProvider(process.env, log);
  // Before the database is touched: a seed would otherwise store its signing secrets in clear.
  assertKeyForMode(keys, config.mode);
  if (config.mode === 'development' && !keys.provider) {
    log.warn(
      'DEVELOPMENT MODE (API_STUB_MODE=development) without PIPELINE_KEK: webhook signing secrets are stored IN ' +
        'CLEAR in the database; never run this way in production',
    );
  }
  const db = openDatabase(config.dbPath);
  if (config.seedPath) {
    const seed = loadSeedFile(config.seedPath);
    const summary = applySeed(db, seed, systemClock(), await selfHostSeedHooks(seed, keys.provider));
    log.info('seed applied', { seed: config.seedPath, ...summary });
    if (summary.selfHostSkipped.length > 0)
      log.warn('selfHost settings in the seed were not applied', { workspaces: summary.selfHostSkipped });
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
  // Node's defaults hold an unfinished request for up to 90 s and take connections until the fds run out.
  const server = createServer(serverTimeoutOptions(config.listenLimits), app);
  capConnections(server, config.listenLimits, { log, portName: 'the api-stub port', variable: 'HTTP_MAX_CONNECTIONS' });
  installClientErrorHandler(server);
  server.once('error', (err) =>
    exitAtStartup('api-stub', 'failed to start: ' + describeListenError(err, { host: config.host, port: config.port, variable: 'PORT' })),
  );
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
    const force = setTimeout(
      () => {
        log.warn('connections did not close in time; exiting');
        db.close();
        process.exit(0);
      },
      Math.max(5000, config.routing.webhookTimeoutMs + 1000),
    );
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
  // The message names the variable or the cause; the stack helps only with LOG_LEVEL=debug.
  log.debug('api-stub failed to start', { err });
  exitAtStartup(
    'api-stub',
    `failed to start: ${err instanceof ConfigError ? `configuration error: ${err.message}` : err instanceof Error ? err.message : String(err)}`,
  );
});
