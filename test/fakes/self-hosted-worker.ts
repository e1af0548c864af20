import { startSpawnServer, type SpawnServer } from './spawn-server.ts';

/**
 * A stand-in for a customer's self-hosted worker behind its TLS ingress, for routing tests: it only
 * answers the spawn (`POST /` with `Authorization: Bearer <pipelineToken>`), with local-room URLs.
 * The real worker (worker/) is tested on its own; routing only needs the contract.
 */
export function startSelfHostedWorker(options: {
  token: string;
  tls: { certPem: string; keyPem: string };
  port?: number;
}): Promise<SpawnServer> {
  return startSpawnServer({
    key: options.token,
    tls: options.tls,
    roomBase: 'wss://worker.selfhost.test/rooms',
    transport: 'local',
    ...(options.port ? { port: options.port } : {}),
  });
}
