import { randomFillSync } from 'node:crypto';

/** Id prefixes of the spec (section 2) and of our own records. */
export type IdPrefix = 'inv' | 'dpl' | 'rsp' | 'evt' | 'ws' | 'whe' | 'del' | 'req';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

// Random bytes are drawn from a pool refilled 4 KiB at a time: one call into the CSPRNG per ~200
// ids instead of one per id (ids are minted on the session-creation hot path).
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

function takeRandom(length: number): Buffer {
  if (length > pool.length) return randomFillSync(Buffer.alloc(length));
  if (poolOffset + length > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const bytes = pool.subarray(poolOffset, poolOffset + length);
  poolOffset += length;
  return bytes;
}

/** A random id such as `inv_k3j9...`: 20 base-36 characters, about 103 bits of entropy. */
export function newId(prefix: IdPrefix, length = 20): string {
  const bytes = takeRandom(length);
  let out = '';
  for (const byte of bytes) out += ALPHABET[byte % ALPHABET.length];
  return `${prefix}_${out}`;
}

const ID_FORMS = new Map<string, RegExp>();

/** True when `value` has the form `<prefix>_<id>` with a non-empty, URL-safe id part. */
export function hasIdForm(value: string, prefix: IdPrefix): boolean {
  let form = ID_FORMS.get(prefix);
  if (!form) {
    form = new RegExp(`^${prefix}_[A-Za-z0-9_-]{1,64}$`);
    ID_FORMS.set(prefix, form);
  }
  return form.test(value);
}
