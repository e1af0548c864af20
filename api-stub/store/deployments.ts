import type { Database } from '../db/database.ts';
import { stmt } from '../db/statements.ts';
import type { InterviewDefinition } from '../../lib/interview.ts';

export type { InterviewDefinition };

/** Deployment statuses: the spec names DRAFT and PAUSED as inactive; ARCHIVED is ours (also inactive). */
export const DEPLOYMENT_STATUSES = ['ACTIVE', 'DRAFT', 'PAUSED', 'ARCHIVED'] as const;
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number];

export interface Deployment {
  id: string;
  workspaceId: string;
  status: DeploymentStatus;
  /** Unix ms, or null for no expiry. */
  expiresAt: number | null;
  interview: InterviewDefinition;
}

export function upsertDeployment(db: Database, deployment: Deployment, now: number): void {
  stmt(
    db,
    `INSERT INTO deployments (id, workspace_id, status, expires_at, interview_json, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET workspace_id = excluded.workspace_id, status = excluded.status,
       expires_at = excluded.expires_at, interview_json = excluded.interview_json, updated_at = excluded.updated_at`,
  ).run(deployment.id, deployment.workspaceId, deployment.status, deployment.expiresAt, JSON.stringify(deployment.interview), now, now);
}

export function getDeployment(db: Database, id: string): Deployment | null {
  const row = stmt(db, 'SELECT id, workspace_id, status, expires_at, interview_json FROM deployments WHERE id = ?').get(id);
  if (!row) return null;
  return {
    id: String(row.id),
    workspaceId: String(row.workspace_id),
    status: row.status as DeploymentStatus,
    expiresAt: row.expires_at === null ? null : Number(row.expires_at),
    interview: JSON.parse(String(row.interview_json)) as InterviewDefinition,
  };
}

/** What session creation checks, without parsing the interview definition. */
export function getDeploymentGate(db: Database, id: string): Pick<Deployment, 'id' | 'workspaceId' | 'status' | 'expiresAt'> | null {
  const row = stmt(db, 'SELECT id, workspace_id, status, expires_at FROM deployments WHERE id = ?').get(id);
  if (!row) return null;
  return {
    id: String(row.id),
    workspaceId: String(row.workspace_id),
    status: row.status as DeploymentStatus,
    expiresAt: row.expires_at === null ? null : Number(row.expires_at),
  };
}
