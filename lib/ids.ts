import { randomBytes } from 'node:crypto';

/** Id prefixes of the spec (section 2) and of our own records. */
export type IdPrefix = 'inv' | 'dpl' | 'rsp' | 'evt' | 'ws' | 'whe' | 'del' | 'req';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/** A random id such as `inv_k3j9...`: 20 base-36 characters, about 103 bits of entropy. */
export function newId(prefix: IdPrefix, length = 20): string {
  const bytes = randomBytes(length);
  let out = '';
  for (const byte of bytes) out += ALPHABET[byte % ALPHABET.length];
  return `${prefix}_${out}`;
}

/** True when `value` has the form `<prefix>_<id>` with a non-empty, URL-safe id part. */
export function hasIdForm(value: string, prefix: IdPrefix): boolean {
  return new RegExp(`^${prefix}_[A-Za-z0-9_-]{1,64}$`).test(value);
}
