import { DatabaseSync } from 'node:sqlite';
import { chmodSync, closeSync, existsSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { noteWriteError } from './write-health.ts';

/**
 * The api-stub's embedded store: one SQLite file through Node 24's built-in `node:sqlite`
 * (no native addon). Schema changes are SQL files in ./migrations named `NNN_name.sql`, applied in
 * order, each in its own transaction, and recorded in `schema_migrations` so each runs once.
 */
export type Database = DatabaseSync;

export const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
const MIGRATION_FILE = /^(\d{3})_[a-z0-9_]+\.sql$/;

export interface Migration {
  version: string;
  name: string;
  sql: string;
}

/** The migration files in apply order; a file with a bad name is an error, not silently skipped. */
export function readMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort();
  const seen = new Set<string>();
  return files.map((name) => {
    const match = MIGRATION_FILE.exec(name);
    if (!match) throw new Error(`migration file ${name} must be named NNN_lowercase_name.sql`);
    const version = match[1]!;
    if (seen.has(version)) throw new Error(`two migration files share the number ${version}`);
    seen.add(version);
    return { version, name, sql: readFileSync(join(dir, name), 'utf8') };
  });
}

/** Applies the migrations not yet recorded; returns the names applied now. */
export function migrate(db: Database, migrations: readonly Migration[] = readMigrations()): string[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at INTEGER NOT NULL
  ) STRICT`);
  const done = new Set(
    db
      .prepare('SELECT version FROM schema_migrations')
      .all()
      .map((r) => String(r.version)),
  );
  const applied: string[] = [];
  for (const m of migrations) {
    if (done.has(m.version)) continue;
    transaction(db, () => {
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, Date.now());
    });
    applied.push(m.name);
  }
  return applied;
}

/** Opens (creating if needed) and migrates the database at `path`. */
export function openDatabase(path: string, migrations?: readonly Migration[]): Database {
  if (path !== ':memory:') restrictFile(path);
  const db = new DatabaseSync(path);
  // Lets the retention pruner give freed pages back to the file system (PRAGMA incremental_vacuum).
  // Takes effect only in a new file, and only before anything (even the switch to WAL) writes its
  // header; an older file keeps and reuses its free pages (docs/api.md, "Retention").
  db.exec('PRAGMA auto_vacuum = INCREMENTAL');
  // WAL lets readers run beside the writer; NORMAL sync is durable across process crashes
  // (a power cut may lose the last commits, which a stand-in service accepts for speed).
  if (path !== ':memory:') db.exec('PRAGMA journal_mode = WAL');
  // Checkpoint (copy the WAL into the file, with an fsync) every ~40 MB of WAL instead of every
  // 4 MB: hot pages are copied once per checkpoint however often they changed, so this cuts the
  // fsyncs and copies on the write path severalfold. The WAL is truncated back after each.
  db.exec('PRAGMA wal_autocheckpoint = 10000');
  db.exec('PRAGMA journal_size_limit = 67108864');
  db.exec('PRAGMA synchronous = NORMAL');
  db.exec('PRAGMA foreign_keys = ON');
  db.exec('PRAGMA busy_timeout = 5000');
  // Deleted and overwritten content (a secret sealed in place, say) is zeroed, not left in free space.
  db.exec('PRAGMA secure_delete = ON');
  migrate(db, migrations);
  // SQLite creates -wal and -shm with the main file's mode; files left by an older version are fixed here.
  if (path !== ':memory:') for (const suffix of ['-wal', '-shm']) if (existsSync(path + suffix)) chmodSync(path + suffix, 0o600);
  return db;
}

/**
 * The file holds hashed keys, sealed secrets and respondents' metadata: readable by its owner only.
 * Created 0600 before SQLite opens it (whatever the umask), and an existing file is narrowed to 0600.
 */
function restrictFile(path: string): void {
  closeSync(openSync(path, 'a', 0o600));
  chmodSync(path, 0o600);
}

const depth = new WeakMap<Database, number>();

/**
 * Runs `fn` in one transaction: committed when it returns, rolled back when it throws.
 * Nested calls join the outer transaction through savepoints, so helpers can compose.
 */
export function transaction<T>(db: Database, fn: () => T): T {
  const level = depth.get(db) ?? 0;
  const savepoint = `sp_${level}`;
  db.exec(level === 0 ? 'BEGIN IMMEDIATE' : `SAVEPOINT ${savepoint}`);
  depth.set(db, level + 1);
  try {
    const result = fn();
    db.exec(level === 0 ? 'COMMIT' : `RELEASE ${savepoint}`);
    return result;
  } catch (err) {
    // A full disk or an I/O error is remembered for readiness (write-health.ts).
    noteWriteError(db, err);
    db.exec(level === 0 ? 'ROLLBACK' : `ROLLBACK TO ${savepoint}; RELEASE ${savepoint}`);
    throw err;
  } finally {
    depth.set(db, level);
  }
}

interface Group {
  waiters: Array<{ resolve: () => void; reject: (err: unknown) => void }>;
}
const groups = new WeakMap<Database, Group>();

export interface GroupCommitOptions {
  /** False only for a single statement, which is atomic anyway and needs no savepoint. */
  savepoint?: boolean;
  /**
   * When a group opened by this call commits. 'immediate' (default): on `setImmediate`, so the
   * requests read in one poll phase share it. 'microtask': as soon as the current callback and its
   * ticks are done, for writes made outside the poll phase (e.g. in a response's 'finish'), which
   * must not keep the transaction open while Node goes back to reading sockets.
   */
  commitOn?: 'immediate' | 'microtask';
}

/**
 * Group commit: runs `fn` at once, in its own savepoint inside a transaction shared by every call
 * made in the same turn of the event loop, and resolves once that transaction has committed. A
 * caller that answers its client only after the promise resolves never reports a write that is not
 * committed, and a burst of concurrent requests pays for one commit instead of one each. If `fn`
 * throws, only its own writes are undone. The transaction is never left open across the poll phase
 * that follows its turn, so other connections (even in this process) only ever wait microseconds.
 */
export function inGroupCommit<T>(db: Database, fn: () => T, options: GroupCommitOptions = {}): Promise<T> {
  let group = groups.get(db);
  if (!group) {
    // Already inside someone's synchronous transaction: just nest in it.
    if ((depth.get(db) ?? 0) > 0) {
      try {
        return Promise.resolve(transaction(db, fn));
      } catch (err) {
        return Promise.reject(err);
      }
    }
    db.exec('BEGIN IMMEDIATE');
    depth.set(db, 1);
    const opened: Group = { waiters: [] };
    groups.set(db, opened);
    group = opened;
    if (options.commitOn === 'microtask') queueMicrotask(() => commitGroup(db, opened));
    else setImmediate(() => commitGroup(db, opened));
  }
  let result: T;
  try {
    result = options.savepoint === false ? fn() : transaction(db, fn);
  } catch (err) {
    return Promise.reject(err);
  }
  const joined = group;
  return new Promise<T>((resolve, reject) => joined.waiters.push({ resolve: () => resolve(result), reject }));
}

function commitGroup(db: Database, group: Group): void {
  groups.delete(db);
  try {
    db.exec('COMMIT');
    depth.set(db, 0);
    for (const w of group.waiters) w.resolve();
  } catch (err) {
    noteWriteError(db, err);
    try {
      if (db.isOpen && db.isTransaction) db.exec('ROLLBACK');
    } catch {
      // The connection is gone; nothing left to undo.
    }
    depth.set(db, 0);
    for (const w of group.waiters) w.reject(err);
  }
}
