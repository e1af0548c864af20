/**
 * The operator's composition root: configuration, API client, then the controller (leader
 * election, watches, work queue, reconcile workers) and the probe and metrics server.
 */
import { createLogger } from '../lib/log.ts';
import { describeListenError, exitAtStartup, exitOnUncaught } from '../lib/process-exit.ts';
import { loadConfig } from './config.ts';
import { startOperator } from './controller.ts';
import { KubeClient } from './kube.ts';
import { stopWithin } from './shutdown.ts';

const log = createLogger({ name: 'voice-operator' });
// A fault that reaches the top ends the process on purpose (70); the Deployment restarts it.
exitOnUncaught(log);

async function main(): Promise<void> {
  const config = loadConfig();
  const kube = await KubeClient.fromKubeConfig(config.kubeconfig, { qps: config.apiQps, burst: config.apiBurst });
  const operator = await startOperator({ config, kube, log });
  log.info('operator started', { identity: config.identity, metricsPort: operator.port, apiServer: kube.server.origin });
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    void stopWithin(() => operator.stop(), config.shutdownTimeoutMs, log).then((result) => {
      kube.close();
      process.exit(result === 'stopped' ? 0 : 1);
    });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

/** A failed start is one line on stderr and exit 1: a taken metrics port says which port and what to do. */
main().catch((err: unknown) => {
  log.debug('operator failed to start', { err });
  const e = err as { syscall?: string; address?: string; port?: number };
  const line =
    e.syscall === 'listen'
      ? describeListenError(err, { host: e.address ?? '0.0.0.0', port: e.port ?? 0, variable: 'METRICS_PORT' })
      : err instanceof Error
        ? err.message
        : String(err);
  exitAtStartup('voice-operator', `failed to start: ${line}`);
});
