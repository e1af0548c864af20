import { startSpawnServer, type SpawnServer } from './spawn-server.ts';

/**
 * The hosted pipeline is SaaS this machine cannot reach. This stand-in speaks the same protocol the
 * api-stub uses with it (POST with `Authorization: Bearer <HOSTED_PIPELINE_KEY>`, answer
 * `{room_url, token, transport}`, with hosted Daily rooms), over HTTPS with a test certificate. Point HOSTED_PIPELINE_URL at `url`.
 */
export function startHostedPipeline(options: {
  key: string;
  tls: { certPem: string; keyPem: string };
  port?: number;
}): Promise<SpawnServer> {
  return startSpawnServer({
    key: options.key,
    tls: options.tls,
    roomBase: 'https://rooms.hosted.test',
    transport: 'daily',
    ...(options.port ? { port: options.port } : {}),
  });
}
