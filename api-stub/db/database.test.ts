import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { inGroupCommit, migrate, openDatabase, readMigrations, transaction } from './database.ts';

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'api-stub-db-'));
}

describe('migrations', () => {
  it('applies files in order, once, and refuses badly named files', () => {
    const dir = tempDir();
    try {
      writeFileSync(join(dir, '002_second.sql'), 'INSERT INTO t VALUES (2);');
      writeFileSync(join(dir, '001_first.sql'), 'CREATE TABLE t (v INTEGER);');
      const db = new DatabaseSync(':memory:');
      expect(migrate(db, readMigrations(dir))).toEqual(['001_first.sql', '002_second.sql']);
      expect(migrate(db, readMigrations(dir))).toEqual([]);
      expect(db.prepare('SELECT v FROM t').all()).toEqual([{ v: 2 }]);
      writeFileSync(join(dir, '3_bad.sql'), '');
      expect(() => readMigrations(dir)).toThrow(/3_bad.sql/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rolls a failing migration back entirely and records nothing for it', () => {
    const dir = tempDir();
    try {
      writeFileSync(join(dir, '001_ok.sql'), 'CREATE TABLE a (v INTEGER);');
      writeFileSync(join(dir, '002_broken.sql'), 'CREATE TABLE b (v INTEGER); INSERT INTO nope VALUES (1);');
      const db = new DatabaseSync(':memory:');
      expect(() => migrate(db, readMigrations(dir))).toThrow(/nope/);
      expect(db.prepare('SELECT version FROM schema_migrations').all()).toEqual([{ version: '001' }]);
      expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'b'").all()).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('transactions', () => {
  it('nest through savepoints: an inner failure undoes only the inner writes', () => {
    const db = openDatabase(':memory:');
    db.exec('CREATE TABLE t (v INTEGER)');
    transaction(db, () => {
      db.exec('INSERT INTO t VALUES (1)');
      expect(() =>
        transaction(db, () => {
          db.exec('INSERT INTO t VALUES (2)');
          throw new Error('inner');
        }),
      ).toThrow('inner');
    });
    expect(db.prepare('SELECT v FROM t').all()).toEqual([{ v: 1 }]);
  });

  it('group commit: calls of one turn share a commit, resolve after it, and a failing call undoes only itself', async () => {
    const dir = tempDir();
    try {
      const path = join(dir, 'g.sqlite');
      const db = openDatabase(path);
      db.exec('CREATE TABLE t (v INTEGER)');
      const other = new DatabaseSync(path);
      const a = inGroupCommit(db, () => db.exec('INSERT INTO t VALUES (1)'));
      const bad = inGroupCommit(db, () => {
        db.exec('INSERT INTO t VALUES (99)');
        throw new Error('refused');
      });
      const b = inGroupCommit(db, () => db.exec('INSERT INTO t VALUES (2)'));
      // Visible at once on the same connection, not yet committed for another one.
      expect(db.prepare('SELECT COUNT(*) AS n FROM t').get()!.n).toBe(2);
      expect(other.prepare('SELECT COUNT(*) AS n FROM t').get()!.n).toBe(0);
      await expect(bad).rejects.toThrow('refused');
      await Promise.all([a, b]);
      expect(other.prepare('SELECT v FROM t ORDER BY v').all()).toEqual([{ v: 1 }, { v: 2 }]);
      expect(db.isTransaction).toBe(false);
      // A plain transaction works again after the group.
      transaction(db, () => db.exec('INSERT INTO t VALUES (3)'));
      expect(other.prepare('SELECT COUNT(*) AS n FROM t').get()!.n).toBe(3);
      other.close();
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
