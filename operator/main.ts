/**
 * The operator's composition root: configuration, API client, then the controller (leader
 * election, watches, work queue, reconcile workers) and the probe and metrics server.
 */
import { createLogger } from '../lib/log.ts';
import { loadConfig } from './config.ts';
import { startOperator } from './controller.ts';
import { KubeClient } from './kube.ts';
import { stopWithin } from './shutdown.ts';

const log = createLogger({ name: 'voice-operator' });

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

main().catch((err: unknown) => {
  log.error('operator failed to start', { error: err });
  process.exit(1);
});
