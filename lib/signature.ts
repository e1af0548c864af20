import { createHmac } from 'node:crypto';

/**
 * The `Service-Signature` scheme of spec section 6: `t=<unix seconds>,v1=<hex>[,v1=<hex>...]`,
 * where each v1 is the lowercase hex HMAC-SHA256 of `<t>.<rawBody>` keyed with a `whsec_` secret.
 * Signing and parsing live here; verification with its error per failure mode lives in
 * sdk/server/webhooks.ts.
 */
export const SIGNATURE_HEADER = 'Service-Signature';
export const SIGNATURE_SCHEME = 'v1';

export function computeSignature(secret: string, timestamp: number, rawBody: string | Buffer): string {
  const hmac = createHmac('sha256', secret);
  hmac.update(`${timestamp}.`);
  hmac.update(rawBody);
  return hmac.digest('hex');
}

/** One header value carrying a `v1` per secret, so that receivers can rotate secrets without downtime. */
export function signatureHeader(secrets: readonly string[], timestamp: number, rawBody: string | Buffer): string {
  if (secrets.length === 0) throw new Error('signatureHeader needs at least one secret');
  const parts = [`t=${timestamp}`];
  for (const secret of secrets) parts.push(`${SIGNATURE_SCHEME}=${computeSignature(secret, timestamp, rawBody)}`);
  return parts.join(',');
}

export interface ParsedSignatureHeader {
  timestamp: number;
  signatures: string[];
}

export type SignatureParseFailure = 'bad_format' | 'no_v1';

const HEX64 = /^[0-9a-fA-F]{64}$/;
const DIGITS = /^\d{1,12}$/;

/**
 * Parses `t=<seconds>,v1=<hex>[,v1=<hex>...]` in one pass (the SDK's verifier runs it on every
 * webhook received; this is its only parser). Unknown schemes (a future `v2=`) and v1 values that
 * are not 64 hex digits are ignored, as receivers must; a missing or repeated `t`, or an item
 * without `=`, is a bad format. Signatures come back as lowercase hex.
 */
export function parseSignatureHeader(header: string): ParsedSignatureHeader | SignatureParseFailure {
  let timestamp = -1;
  const signatures: string[] = [];
  let start = 0;
  while (start <= header.length) {
    let end = header.indexOf(',', start);
    if (end === -1) end = header.length;
    const eq = header.indexOf('=', start);
    if (eq <= start || eq >= end) return 'bad_format';
    const key = header.slice(start, eq).trim();
    const value = header.slice(eq + 1, end).trim();
    if (key === 't') {
      if (timestamp !== -1 || !DIGITS.test(value)) return 'bad_format';
      timestamp = Number(value);
    } else if (key === SIGNATURE_SCHEME && HEX64.test(value)) {
      signatures.push(value.toLowerCase());
    }
    start = end + 1;
  }
  if (timestamp === -1) return 'bad_format';
  if (signatures.length === 0) return 'no_v1';
  return { timestamp, signatures };
}
