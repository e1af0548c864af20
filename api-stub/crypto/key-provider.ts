import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { Logger } from '../../lib/log.ts';

/**
 * The key-encryption key (KEK) behind envelope encryption of pipeline tokens.
 * A provider wraps and unwraps 32-byte data keys; it never sees a token. The default one keeps a
 * local AES-256 key taken from PIPELINE_KEK; a cloud KMS would implement the same two calls.
 */
export interface KeyProvider {
  /** Stable name of the provider kind, stored beside each ciphertext (e.g. "local"). */
  readonly kind: string;
  /** Identifies the key (not secret): a ciphertext wrapped by another key fails with a clear error. */
  readonly keyId: string;
  wrap(dataKey: Buffer, context: Buffer): Promise<Buffer>;
  unwrap(wrapped: Buffer, context: Buffer): Promise<Buffer>;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** AES-256-GCM with a local key: wrapped = iv || tag || ciphertext, the context bound as associated data. */
export function localKeyProvider(kek: Buffer): KeyProvider {
  if (kek.length !== 32) throw new Error(`a local key-encryption key must be 32 bytes, got ${kek.length}`);
  const key = Buffer.from(kek);
  const keyId = createHash('sha256').update('pipeline-kek-id:').update(key).digest('hex').slice(0, 16);
  return {
    kind: 'local',
    keyId,
    async wrap(dataKey, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(context);
      const ct = Buffer.concat([cipher.update(dataKey), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), ct]);
    },
    async unwrap(wrapped, context) {
      if (wrapped.length <= IV_BYTES + TAG_BYTES) throw new Error('wrapped data key is truncated');
      const decipher = createDecipheriv('aes-256-gcm', key, wrapped.subarray(0, IV_BYTES));
      decipher.setAAD(context);
      decipher.setAuthTag(wrapped.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(wrapped.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
    },
  };
}

export type KeyProviderSource = 'env' | 'dev-generated' | 'missing';

export interface LoadedKeyProvider {
  provider: KeyProvider | null;
  source: KeyProviderSource;
}

/**
 * Reads PIPELINE_KEK (base64 of exactly 32 bytes). When it is missing:
 * - with PIPELINE_KEK_DEV=1 (an explicit dev mode) a random key is generated for this process and a
 *   warning says that tokens stored with it cannot be read after a restart;
 * - otherwise there is no provider: the api-stub refuses to start when self-host settings exist
 *   (see assertKeyForSelfHost) and the admin endpoint refuses to store a token.
 * A malformed value is always a startup error naming the variable.
 */
export function loadKeyProvider(env: Readonly<Record<string, string | undefined>>, log?: Logger): LoadedKeyProvider {
  const raw = env.PIPELINE_KEK?.trim();
  if (raw) {
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(raw))
      throw new Error('PIPELINE_KEK: expected base64 of 32 random bytes (e.g. `openssl rand -base64 32`)');
    const key = Buffer.from(raw, 'base64');
    if (key.length !== 32) throw new Error(`PIPELINE_KEK: expected base64 of 32 bytes, got ${key.length} bytes`);
    return { provider: localKeyProvider(key), source: 'env' };
  }
  if (env.PIPELINE_KEK_DEV === '1') {
    log?.warn(
      'PIPELINE_KEK is not set; PIPELINE_KEK_DEV=1 generated a throwaway key: pipeline tokens stored now cannot be decrypted after a restart',
    );
    return { provider: localKeyProvider(randomBytes(32)), source: 'dev-generated' };
  }
  return { provider: null, source: 'missing' };
}

/** Startup check: stored self-host settings without a key would fail every spawn, so refuse to run. */
export function assertKeyForSelfHost(loaded: LoadedKeyProvider, selfHostWorkspaces: number): void {
  if (loaded.provider === null && selfHostWorkspaces > 0) {
    throw new Error(
      `PIPELINE_KEK: not set, but ${selfHostWorkspaces} workspace(s) have self-host settings whose tokens need it; ` +
        `set PIPELINE_KEK (base64 of 32 bytes) or PIPELINE_KEK_DEV=1 for a throwaway dev key`,
    );
  }
}

/**
 * Startup check: in production mode a key is required, whatever the database holds today, because
 * webhook signing secrets (seeded, or set later) would otherwise be stored in clear. Development
 * mode runs without one; the caller says so loudly.
 */
export function assertKeyForMode(loaded: LoadedKeyProvider, mode: 'production' | 'development'): void {
  if (loaded.provider === null && mode === 'production') {
    throw new Error(
      'PIPELINE_KEK: not set; in production the api-stub seals webhook signing secrets and pipeline tokens with it ' +
        'and will not store them in clear. Set PIPELINE_KEK (base64 of 32 bytes, e.g. `openssl rand -base64 32`), or ' +
        'API_STUB_MODE=development to run without a key on a development machine',
    );
  }
}
