import type { StatementSync } from 'node:sqlite';
import type { Database } from './database.ts';

/** Prepared statements cached per database and SQL text, so hot paths prepare once. */
const cache = new WeakMap<Database, Map<string, StatementSync>>();

export function stmt(db: Database, sql: string): StatementSync {
  let perDb = cache.get(db);
  if (!perDb) {
    perDb = new Map();
    cache.set(db, perDb);
  }
  let statement = perDb.get(sql);
  if (!statement) {
    statement = db.prepare(sql);
    perDb.set(sql, statement);
  }
  return statement;
}
