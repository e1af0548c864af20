import { createHash } from 'node:crypto';
import type { Database } from '../db/database.ts';
import { stmt } from '../db/statements.ts';

/** API keys of spec section 2: `pk_test_…`/`pk_live_…` publishable, `sk_…` secret (`sk_test_`/`sk_live_` tell the mode). */
export type KeyKind = 'publishable' | 'secret';
export type KeyMode = 'test' | 'live';

export interface KeyShape {
  kind: KeyKind;
  mode: KeyMode;
}

const PUBLISHABLE = /^pk_(test|live)_[A-Za-z0-9]{8,128}$/;
const SECRET = /^sk_(?:(test|live)_)?[A-Za-z0-9]{8,128}$/;

/** The kind and mode a key's form says, or null when it is no key of ours. */
export function classifyKey(key: string): KeyShape | null {
  const pk = PUBLISHABLE.exec(key);
  if (pk) return { kind: 'publishable', mode: pk[1] as KeyMode };
  const sk = SECRET.exec(key);
  if (sk) return { kind: 'secret', mode: (sk[1] as KeyMode | undefined) ?? 'live' };
  return null;
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** What humans see of a key: prefix and last four characters. */
export function keyHint(key: string): string {
  const prefix = key.startsWith('pk_') || key.startsWith('sk_') ? key.slice(0, key.indexOf('_', 3) + 1 || 3) : '';
  return `${prefix}...${key.slice(-4)}`;
}

export interface KeyRecord extends KeyShape {
  workspaceId: string;
}

/**
 * Lookups are cached per database for a few seconds: every session call authenticates, and keys
 * change only through the seed (which clears the cache). Unknown keys are cached too, so a flood of
 * random keys costs one query each at most every TTL; the cache is emptied when it grows too big.
 */
const CACHE_TTL_MS = 5_000;
const CACHE_MAX = 10_000;
const caches = new WeakMap<Database, Map<string, { record: KeyRecord | null; until: number }>>();

function cacheOf(db: Database): Map<string, { record: KeyRecord | null; until: number }> {
  let cache = caches.get(db);
  if (!cache) {
    cache = new Map();
    caches.set(db, cache);
  }
  return cache;
}

export function upsertKey(db: Database, workspaceId: string, key: string, now: number): KeyRecord {
  cacheOf(db).clear();
  const shape = classifyKey(key);
  if (!shape) throw new Error(`not a publishable or secret key: ${keyHint(key)}`);
  stmt(
    db,
    `INSERT INTO api_keys (key_hash, workspace_id, kind, mode, hint, created_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (key_hash) DO UPDATE SET workspace_id = excluded.workspace_id`,
  ).run(hashKey(key), workspaceId, shape.kind, shape.mode, keyHint(key), now);
  return { ...shape, workspaceId };
}

/** The workspace owning `key`, or null for an unknown key. Lookup is by hash; the key itself is never stored. */
export function findKey(db: Database, key: string): KeyRecord | null {
  const cache = cacheOf(db);
  const now = Date.now();
  const hit = cache.get(key);
  if (hit && hit.until > now) return hit.record;
  const row = stmt(db, 'SELECT workspace_id, kind, mode FROM api_keys WHERE key_hash = ?').get(hashKey(key));
  const record: KeyRecord | null = row
    ? { workspaceId: String(row.workspace_id), kind: row.kind as KeyKind, mode: row.mode as KeyMode }
    : null;
  if (cache.size >= CACHE_MAX) cache.clear();
  cache.set(key, { record, until: now + CACHE_TTL_MS });
  return record;
}
