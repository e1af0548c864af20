import type { Database } from '../db/database.ts';
import { stmt } from '../db/statements.ts';

export interface Workspace {
  id: string;
  name: string;
}

export function upsertWorkspace(db: Database, workspace: Workspace, now: number): void {
  stmt(
    db,
    `INSERT INTO workspaces (id, name, created_at, updated_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET name = excluded.name, updated_at = excluded.updated_at`,
  ).run(workspace.id, workspace.name, now, now);
}
