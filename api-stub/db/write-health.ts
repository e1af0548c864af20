// The node:sqlite handle itself (database.ts calls into this file, so its alias is not imported here).
import type { DatabaseSync as Database } from 'node:sqlite';

/**
 * Whether the database can write, for readiness. A read (`SELECT 1`) succeeds on a full disk while
 * every write answers 500; so the write paths report storage failures here (SQLITE_FULL, I/O errors,
 * a read-only or vanished file), and while one is remembered `/readyz` tries a real write that needs
 * fresh pages. It clears the failure only when that write commits.
 */
interface Failure {
  at: number;
  reason: string;
}

const failures = new WeakMap<Database, Failure>();

// Primary SQLite result codes (the low byte of an extended code) that mean "cannot store".
const SQLITE_READONLY = 8;
const SQLITE_IOERR = 10;
const SQLITE_CORRUPT = 11;
const SQLITE_FULL = 13;
const SQLITE_CANTOPEN = 14;
const STORAGE_CODES: Record<number, string> = {
  [SQLITE_READONLY]: 'SQLITE_READONLY',
  [SQLITE_IOERR]: 'SQLITE_IOERR',
  [SQLITE_CORRUPT]: 'SQLITE_CORRUPT',
  [SQLITE_FULL]: 'SQLITE_FULL',
  [SQLITE_CANTOPEN]: 'SQLITE_CANTOPEN',
};

interface SqliteError {
  code?: string;
  errcode?: number;
  errstr?: string;
}

/** The storage failure an error stands for (e.g. "database or disk is full (SQLITE_FULL)"), or null. */
export function storageFailureOf(err: unknown): string | null {
  const e = err as SqliteError | null;
  if (!e || e.code !== 'ERR_SQLITE_ERROR' || typeof e.errcode !== 'number') return null;
  const name = STORAGE_CODES[e.errcode & 0xff];
  return name ? `${e.errstr ?? 'storage error'} (${name})` : null;
}

/** Remembers `err` when it is a storage failure; other errors are not the disk's. */
export function noteWriteError(db: Database, err: unknown, now = Date.now()): void {
  const reason = storageFailureOf(err);
  if (reason) failures.set(db, { at: now, reason });
}

/** The storage failure remembered for this database, if any. */
export function writeFailure(db: Database): Failure | null {
  return failures.get(db) ?? null;
}

/**
 * A real write: a row of at least `bytes` and two pages (so that it needs pages a full database does
 * not have), deleted again, committed. Clears the remembered failure when it commits; remembers the
 * new one when not. The caller sizes it above the largest write a request makes: a probe smaller
 * than a session creation fitted in the last free pages while every creation failed (issue 41).
 */
export function probeWrite(db: Database, bytes = 0): boolean {
  if (db.isTransaction) return writeFailure(db) === null; // a write is under way; judge by the last result
  const pageSize = Number(Object.values(db.prepare('PRAGMA page_size').get() ?? {})[0] ?? 4096);
  try {
    db.exec('BEGIN IMMEDIATE');
    try {
      db.prepare('INSERT INTO write_probe (filler) VALUES (zeroblob(?))').run(Math.max(pageSize * 2, bytes));
      db.exec('DELETE FROM write_probe');
      db.exec('COMMIT');
    } catch (err) {
      if (db.isTransaction) db.exec('ROLLBACK');
      throw err;
    }
    failures.delete(db);
    return true;
  } catch (err) {
    noteWriteError(db, err);
    return false;
  }
}
