import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * HS256 JSON Web Tokens with node:crypto: join tokens for the worker's own local rooms, and the
 * self-signed meeting tokens that the hosted video-room provider accepts when signed with the
 * domain's API key. Signing is deterministic: the same claims give the same token, which lets
 * every replica answer a repeated spawn with the very same token.
 */
const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');

export type Claims = Record<string, unknown>;

export function signJwt(claims: Claims, secret: string): string {
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  const signature = createHmac('sha256', secret).update(`${HEADER}.${payload}`).digest('base64url');
  return `${HEADER}.${payload}.${signature}`;
}

export type VerifyResult = { ok: true; claims: Claims } | { ok: false; reason: 'malformed' | 'bad_signature' | 'expired' };

/**
 * True when `text` is base64url exactly as an encoder writes it: no padding, no character outside the
 * alphabet, no unused low bits set in the last character. Node's decoder ignores all three, so without
 * this check `sig=`, `sig==` or a last character off by its spare bits would verify as `sig`.
 */
export function isCanonicalBase64url(text: string): boolean {
  return /^[A-Za-z0-9_-]*$/.test(text) && Buffer.from(text, 'base64url').toString('base64url') === text;
}

/** Checks the encoding (canonical only), the signature in constant time and `exp` against `nowSeconds`. */
export function verifyJwt(token: string, secret: string, nowSeconds: number): VerifyResult {
  const parts = token.split('.');
  if (parts.length !== 3) return { ok: false, reason: 'malformed' };
  const [header, payload, signature] = parts as [string, string, string];
  if (header !== HEADER) return { ok: false, reason: 'malformed' };
  // One token, one spelling: a variant of a valid token is refused, not accepted as the same token.
  if (!isCanonicalBase64url(payload) || !isCanonicalBase64url(signature)) return { ok: false, reason: 'malformed' };
  const expected = createHmac('sha256', secret).update(`${header}.${payload}`).digest();
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'bad_signature' };
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  if (!claims || typeof claims !== 'object' || Array.isArray(claims)) return { ok: false, reason: 'malformed' };
  const exp = (claims as Claims).exp;
  if (typeof exp !== 'number' || exp <= nowSeconds) return { ok: false, reason: 'expired' };
  return { ok: true, claims: claims as Claims };
}
