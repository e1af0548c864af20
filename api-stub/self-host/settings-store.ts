import type { Database } from '../db/database.ts';
import { stmt } from '../db/statements.ts';
import { openSecret, sealSecret } from '../crypto/envelope.ts';
import type { KeyProvider } from '../crypto/key-provider.ts';

/**
 * A workspace's self-host settings (spec: Settings → Server → Self-host): the worker's endpoint and
 * the shared token, which is stored only as an envelope (crypto/envelope.ts) and opened per call.
 */
export interface SelfHostSettings {
  pipelineEndpoint: string;
  sealedToken: string;
}

export function getSelfHost(db: Database, workspaceId: string): SelfHostSettings | null {
  const row = stmt(db, 'SELECT pipeline_endpoint, pipeline_token_sealed FROM workspaces WHERE id = ?').get(workspaceId);
  if (!row || row.pipeline_endpoint === null || row.pipeline_token_sealed === null) return null;
  return { pipelineEndpoint: String(row.pipeline_endpoint), sealedToken: String(row.pipeline_token_sealed) };
}

/** Stores an already sealed token (the seed seals before its synchronous transaction). */
export function putSealedSelfHost(db: Database, workspaceId: string, pipelineEndpoint: string, sealedToken: string, now: number): void {
  stmt(db, 'UPDATE workspaces SET pipeline_endpoint = ?, pipeline_token_sealed = ?, updated_at = ? WHERE id = ?').run(
    pipelineEndpoint,
    sealedToken,
    now,
    workspaceId,
  );
}

export async function putSelfHost(
  db: Database,
  keys: KeyProvider,
  workspaceId: string,
  pipelineEndpoint: string,
  pipelineToken: string,
  now: number,
): Promise<void> {
  const sealed = await sealSecret(pipelineToken, workspaceId, keys);
  putSealedSelfHost(db, workspaceId, pipelineEndpoint, sealed, now);
}

/** Clearing sends the next session to the hosted pipeline. */
export function clearSelfHost(db: Database, workspaceId: string, now: number): void {
  stmt(db, 'UPDATE workspaces SET pipeline_endpoint = NULL, pipeline_token_sealed = NULL, updated_at = ? WHERE id = ?').run(
    now,
    workspaceId,
  );
}

export function countSelfHostWorkspaces(db: Database): number {
  return Number(stmt(db, 'SELECT count(*) AS n FROM workspaces WHERE pipeline_endpoint IS NOT NULL').get()!.n);
}

/** The plaintext token, for one spawn call or one outcome-report check; never stored or logged. */
export function openToken(settings: SelfHostSettings, workspaceId: string, keys: KeyProvider): Promise<string> {
  return openSecret(settings.sealedToken, workspaceId, keys);
}
