import type { Database } from '../db/database.ts';
import { stmt } from '../db/statements.ts';
import { newId } from '../../lib/ids.ts';

/** A workspace's webhook endpoint: every event is POSTed to `url`, signed with each secret. */
export interface WebhookEndpoint {
  id: string;
  workspaceId: string;
  url: string;
  secrets: string[];
}

/** Upserts by (workspace, url): re-seeding replaces the secrets and keeps the id. */
export function upsertWebhookEndpoint(db: Database, workspaceId: string, endpoint: { url: string; secrets: string[] }, now: number): WebhookEndpoint {
  const row = stmt(
    db,
    `INSERT INTO webhook_endpoints (id, workspace_id, url, secrets_json, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (workspace_id, url) DO UPDATE SET secrets_json = excluded.secrets_json, updated_at = excluded.updated_at
     RETURNING id`,
  ).get(newId('whe'), workspaceId, endpoint.url, JSON.stringify(endpoint.secrets), now, now);
  return { id: String(row!.id), workspaceId, url: endpoint.url, secrets: [...endpoint.secrets] };
}

export function listWebhookEndpoints(db: Database, workspaceId: string): WebhookEndpoint[] {
  return stmt(db, 'SELECT id, workspace_id, url, secrets_json FROM webhook_endpoints WHERE workspace_id = ? ORDER BY created_at, id')
    .all(workspaceId)
    .map((row) => ({
      id: String(row.id),
      workspaceId: String(row.workspace_id),
      url: String(row.url),
      secrets: JSON.parse(String(row.secrets_json)) as string[],
    }));
}
