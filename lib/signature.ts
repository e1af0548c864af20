import { createHmac } from 'node:crypto';

/**
 * The `Service-Signature` scheme of spec section 6: `t=<unix seconds>,v1=<hex>[,v1=<hex>...]`,
 * where each v1 is the lowercase hex HMAC-SHA256 of `<t>.<rawBody>` keyed with a `whsec_` secret.
 * Signing lives here; verification with its error per failure mode lives in sdk/webhooks.ts.
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

/** Parses a header value; unknown schemes (e.g. a future `v2=`) are ignored, as receivers must. */
export function parseSignatureHeader(header: string): ParsedSignatureHeader | SignatureParseFailure {
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const item of header.split(',')) {
    const eq = item.indexOf('=');
    if (eq <= 0) return 'bad_format';
    const key = item.slice(0, eq).trim();
    const value = item.slice(eq + 1).trim();
    if (key === 't') {
      if (!/^\d{1,12}$/.test(value) || timestamp !== undefined) return 'bad_format';
      timestamp = Number(value);
    } else if (key === SIGNATURE_SCHEME) {
      if (/^[0-9a-f]{64}$/i.test(value)) signatures.push(value.toLowerCase());
    }
  }
  if (timestamp === undefined) return 'bad_format';
  if (signatures.length === 0) return 'no_v1';
  return { timestamp, signatures };
}
