import { isSealed, openSecret, SecretDecryptError, sealSecret } from '../crypto/envelope.ts';
import type { KeyProvider } from '../crypto/key-provider.ts';
import type { Database } from '../db/database.ts';
import { stmt } from '../db/statements.ts';

/**
 * A webhook endpoint's signing secrets at rest: the JSON list sealed under the same envelope
 * encryption as pipeline tokens (crypto/envelope.ts, purpose `webhookSecrets`), in the
 * `secrets_json` column. Rows written before this existed (or with no key configured) hold the
 * plain JSON list; `sealStoredEndpointSecrets` seals them at start (docs/webhooks.md).
 */
export function sealEndpointSecrets(secrets: readonly string[], workspaceId: string, keys: KeyProvider): Promise<string> {
  return sealSecret(JSON.stringify(secrets), workspaceId, keys, 'webhookSecrets');
}

/** The secrets of a stored column value; a sealed value needs the key. */
export async function openEndpointSecrets(stored: string, workspaceId: string, keys: KeyProvider | null): Promise<string[]> {
  if (!isSealed(stored)) return JSON.parse(stored) as string[];
  if (!keys) throw new SecretDecryptError('no key-encryption key is configured (PIPELINE_KEK)');
  return JSON.parse(await openSecret(stored, workspaceId, keys, 'webhookSecrets')) as string[];
}

/**
 * The migration of existing rows: seals every plaintext secrets column, then truncates the WAL so
 * that the plaintext pages do not linger beside the database (secure_delete zeroes them in the file).
 * Returns how many rows it sealed.
 */
export async function sealStoredEndpointSecrets(db: Database, keys: KeyProvider): Promise<number> {
  const rows = stmt(db, "SELECT id, workspace_id, secrets_json FROM webhook_endpoints WHERE secrets_json NOT LIKE 'penv1:%'").all();
  let sealed = 0;
  for (const row of rows) {
    const envelope = await sealEndpointSecrets(JSON.parse(String(row.secrets_json)) as string[], String(row.workspace_id), keys);
    // Only if nobody changed the row meanwhile (a seed applied by another process, say).
    const changed = stmt(db, 'UPDATE webhook_endpoints SET secrets_json = ? WHERE id = ? AND secrets_json = ?').run(
      envelope,
      String(row.id),
      String(row.secrets_json),
    );
    sealed += Number(changed.changes);
  }
  if (sealed > 0) db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  return sealed;
}

export function countPlaintextEndpointSecrets(db: Database): number {
  return Number(stmt(db, "SELECT count(*) AS n FROM webhook_endpoints WHERE secrets_json NOT LIKE 'penv1:%'").get()!.n);
}
