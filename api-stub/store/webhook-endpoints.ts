import type { Database } from '../db/database.ts';
import { stmt } from '../db/statements.ts';
import { newId } from '../../lib/ids.ts';
import { isSealed } from '../crypto/envelope.ts';

/**
 * A workspace's webhook endpoint: every event is POSTed to `url`, signed with each secret. The
 * secrets are stored sealed (webhooks/endpoint-secrets.ts); `secrets` is null for a sealed row.
 */
export interface WebhookEndpoint {
  id: string;
  workspaceId: string;
  url: string;
  sealed: boolean;
  secrets: string[] | null;
}

/**
 * Upserts by (workspace, url): re-seeding replaces the secrets and keeps the id. `sealedSecrets`
 * (an envelope of the list) is what is stored when given; the plain list only without a key.
 */
export function upsertWebhookEndpoint(
  db: Database,
  workspaceId: string,
  endpoint: { url: string; secrets: string[]; sealedSecrets?: string | undefined },
  now: number,
): WebhookEndpoint {
  const row = stmt(
    db,
    `INSERT INTO webhook_endpoints (id, workspace_id, url, secrets_json, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (workspace_id, url) DO UPDATE SET secrets_json = excluded.secrets_json, updated_at = excluded.updated_at
     RETURNING id`,
  ).get(newId('whe'), workspaceId, endpoint.url, endpoint.sealedSecrets ?? JSON.stringify(endpoint.secrets), now, now);
  return {
    id: String(row!.id),
    workspaceId,
    url: endpoint.url,
    sealed: endpoint.sealedSecrets !== undefined,
    secrets: endpoint.sealedSecrets === undefined ? [...endpoint.secrets] : null,
  };
}

export function listWebhookEndpoints(db: Database, workspaceId: string): WebhookEndpoint[] {
  return stmt(db, 'SELECT id, workspace_id, url, secrets_json FROM webhook_endpoints WHERE workspace_id = ? ORDER BY created_at, id')
    .all(workspaceId)
    .map((row) => {
      const sealed = isSealed(String(row.secrets_json));
      return {
        id: String(row.id),
        workspaceId: String(row.workspace_id),
        url: String(row.url),
        sealed,
        secrets: sealed ? null : (JSON.parse(String(row.secrets_json)) as string[]),
      };
    });
}
