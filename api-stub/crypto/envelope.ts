import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { KeyProvider } from './key-provider.ts';

/**
 * Envelope encryption of a workspace secret (the pipeline token, a webhook endpoint's signing
 * secrets): a fresh random 32-byte data key per secret encrypts the plaintext with AES-256-GCM; the
 * provider wraps the data key. `<purpose>:<workspace id>` is associated data on both layers, so a
 * ciphertext copied into another workspace's row, or into another kind of column, fails to open.
 *
 * Stored as one string: `penv1:` + base64url(JSON {v, kind, kid, wk, iv, ct, tag}).
 */
const PREFIX = 'penv1:';
const ALGORITHM = 'aes-256-gcm';

interface SealedV1 {
  v: 1;
  kind: string;
  kid: string;
  wk: string;
  iv: string;
  ct: string;
  tag: string;
}

export class SecretDecryptError extends Error {
  constructor(reason: string) {
    super(`the stored secret cannot be decrypted: ${reason}`);
    this.name = 'SecretDecryptError';
  }
}

/** What a sealed secret is; part of its associated data. */
export type SecretPurpose = 'pipelineToken' | 'webhookSecrets';

function context(workspaceId: string, purpose: SecretPurpose): Buffer {
  return Buffer.from(`${purpose}:${workspaceId}`, 'utf8');
}

export async function sealSecret(
  plaintext: string,
  workspaceId: string,
  provider: KeyProvider,
  purpose: SecretPurpose = 'pipelineToken',
): Promise<string> {
  const dataKey = randomBytes(32);
  const iv = randomBytes(12);
  const aad = context(workspaceId, purpose);
  try {
    const cipher = createCipheriv(ALGORITHM, dataKey, iv);
    cipher.setAAD(aad);
    const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const sealed: SealedV1 = {
      v: 1,
      kind: provider.kind,
      kid: provider.keyId,
      wk: (await provider.wrap(dataKey, aad)).toString('base64'),
      iv: iv.toString('base64'),
      ct: ct.toString('base64'),
      tag: cipher.getAuthTag().toString('base64'),
    };
    return PREFIX + Buffer.from(JSON.stringify(sealed), 'utf8').toString('base64url');
  } finally {
    dataKey.fill(0);
  }
}

function parse(serialized: string): SealedV1 {
  if (!serialized.startsWith(PREFIX)) throw new SecretDecryptError('unknown format version');
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(serialized.slice(PREFIX.length), 'base64url').toString('utf8'));
  } catch {
    throw new SecretDecryptError('corrupt envelope');
  }
  const v = value as Partial<SealedV1>;
  if (v.v !== 1 || [v.kind, v.kid, v.wk, v.iv, v.ct, v.tag].some((f) => typeof f !== 'string'))
    throw new SecretDecryptError('corrupt envelope');
  return v as SealedV1;
}

export async function openSecret(
  serialized: string,
  workspaceId: string,
  provider: KeyProvider,
  purpose: SecretPurpose = 'pipelineToken',
): Promise<string> {
  const sealed = parse(serialized);
  if (sealed.kind !== provider.kind || sealed.kid !== provider.keyId) {
    throw new SecretDecryptError(
      `it was sealed with key ${sealed.kind}/${sealed.kid}, the configured key is ${provider.kind}/${provider.keyId}`,
    );
  }
  const aad = context(workspaceId, purpose);
  let dataKey: Buffer;
  try {
    dataKey = await provider.unwrap(Buffer.from(sealed.wk, 'base64'), aad);
  } catch {
    throw new SecretDecryptError('the data key does not unwrap for this workspace');
  }
  try {
    const decipher = createDecipheriv(ALGORITHM, dataKey, Buffer.from(sealed.iv, 'base64'));
    decipher.setAAD(aad);
    decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(sealed.ct, 'base64')), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretDecryptError('authentication failed');
  } finally {
    dataKey.fill(0);
  }
}

/** True when a value looks like one of our envelopes (used by the seed loader to refuse plaintext columns). */
export function isSealed(value: string): boolean {
  return value.startsWith(PREFIX);
}
