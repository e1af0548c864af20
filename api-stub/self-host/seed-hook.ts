import type { Database } from '../db/database.ts';
import { sealSecret } from '../crypto/envelope.ts';
import type { KeyProvider } from '../crypto/key-provider.ts';
import type { Seed, SeedHooks, SelfHostSeed } from '../seed.ts';
import { clearSelfHost, putSealedSelfHost } from './settings-store.ts';
import { sealEndpointSecrets } from '../webhooks/endpoint-secrets.ts';

/**
 * Self-host settings (and sealed webhook signing secrets) from the seed file. Sealing is asynchronous (a KMS may sit behind the key
 * provider) and the seed transaction is not, so every token is sealed first and the hook only
 * writes envelopes. `selfHost: {pipelineEndpoint: null}` clears a workspace's settings.
 */
export async function selfHostSeedHooks(seed: Seed, keys: KeyProvider | null): Promise<SeedHooks> {
  const sealed = new Map<string, { endpoint: string; envelope: string } | null>();
  for (const ws of seed.workspaces) {
    const settings: SelfHostSeed | null = ws.selfHost;
    if (!settings) continue;
    if (settings.pipelineEndpoint === null) {
      sealed.set(ws.id, null);
      continue;
    }
    if (!settings.pipelineToken)
      throw new Error(`API_STUB_SEED: workspaces ${ws.id}: selfHost.pipelineToken is required when pipelineEndpoint is set`);
    if (!keys)
      throw new Error(
        `PIPELINE_KEK: not set, but the seed gives workspace ${ws.id} a self-host token to store; set PIPELINE_KEK (base64 of 32 bytes) or PIPELINE_KEK_DEV=1`,
      );
    sealed.set(ws.id, { endpoint: settings.pipelineEndpoint, envelope: await sealSecret(settings.pipelineToken, ws.id, keys) });
  }
  // Webhook signing secrets are sealed the same way when a key is configured (docs/webhooks.md).
  const webhookSecrets = new Map<string, string>();
  if (keys) {
    for (const ws of seed.workspaces) {
      for (const endpoint of ws.webhookEndpoints)
        webhookSecrets.set(`${ws.id} ${endpoint.url}`, await sealEndpointSecrets(endpoint.secrets, ws.id, keys));
    }
  }
  return {
    sealedWebhookSecrets: (workspaceId, url) => webhookSecrets.get(`${workspaceId} ${url}`),
    applySelfHost(db: Database, workspaceId: string, _settings: SelfHostSeed, now: number) {
      const entry = sealed.get(workspaceId);
      if (entry === undefined) return;
      if (entry === null) clearSelfHost(db, workspaceId, now);
      else putSealedSelfHost(db, workspaceId, entry.endpoint, entry.envelope, now);
    },
  };
}
