import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { parseSignatureHeader, signatureHeader } from '../../lib/signature.ts';

/**
 * Verifying `Service-Signature` headers (spec section 6): HMAC-SHA256 of `<t>.<rawBody>` keyed with
 * each `whsec_` secret, compared in constant time against every `v1` in the header; the timestamp must
 * be within `tolerance` seconds of now on either side. Each failure has its own code.
 */
export type WebhookErrorCode =
  'missing_header' | 'bad_format' | 'no_v1' | 'signature_mismatch' | 'timestamp_outside_tolerance' | 'body_not_raw' | 'invalid_payload';

export class WebhookSignatureError extends Error {
  override readonly name = 'WebhookSignatureError';
  readonly code: WebhookErrorCode;
  constructor(code: WebhookErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** The webhook envelope of spec section 2. `type` may be one we do not know yet: ignore those. */
export interface WebhookEvent<D = Record<string, unknown>> {
  id: string;
  type: 'interview.completed' | 'interview.failed' | 'session.expired' | (string & {});
  created: number;
  data: D;
}

export interface ConstructEventOptions {
  /** The current time in Unix ms (default Date.now); injectable so tests can move the clock. */
  now?: () => number;
}

export const DEFAULT_TOLERANCE_SECONDS = 300;

function bodyBytes(rawBody: unknown): Buffer | string {
  if (typeof rawBody === 'string' || Buffer.isBuffer(rawBody)) return rawBody;
  if (rawBody instanceof Uint8Array) return Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  throw new WebhookSignatureError(
    'body_not_raw',
    'constructEvent needs the raw request body as a string or Buffer, not parsed JSON. In Express, use ' +
      'express.raw({ type: "application/json" }) on the webhook route.',
  );
}

// Secrets as prepared HMAC keys: a receiver verifies with the same few secrets again and again.
const preparedKeys = new Map<string, KeyObject>();
function hmacKey(secret: string): KeyObject {
  let key = preparedKeys.get(secret);
  if (!key) {
    if (preparedKeys.size >= 64) preparedKeys.clear();
    key = createSecretKey(Buffer.from(secret, 'utf8'));
    preparedKeys.set(secret, key);
  }
  return key;
}

/** True when any `v1` matches any secret; every candidate is compared in constant time. */
function anyMatch(secrets: readonly string[], timestamp: number, body: Buffer | string, candidates: readonly Buffer[]): boolean {
  let matched = false;
  for (const secret of secrets) {
    // One update with the joined string when the body is text: fewer crossings into native code.
    const hmac = createHmac('sha256', hmacKey(secret));
    const expected = (typeof body === 'string' ? hmac.update(`${timestamp}.${body}`) : hmac.update(`${timestamp}.`).update(body)).digest();
    // Both sides are 32 bytes (the parser admits only 64 hex digits); no early exit.
    for (const candidate of candidates) if (timingSafeEqual(expected, candidate)) matched = true;
  }
  return matched;
}

export function constructEvent<D = Record<string, unknown>>(
  rawBody: string | Buffer | Uint8Array,
  header: string | readonly string[] | null | undefined,
  secret: string | readonly string[],
  tolerance: number = DEFAULT_TOLERANCE_SECONDS,
  options: ConstructEventOptions = {},
): WebhookEvent<D> {
  const secrets = typeof secret === 'string' ? [secret] : [...secret];
  if (secrets.length === 0 || secrets.some((s) => typeof s !== 'string' || s.length === 0)) {
    throw new TypeError('constructEvent needs a whsec_ secret (or a non-empty list of them)');
  }
  if (!Number.isFinite(tolerance) || tolerance < 0) throw new TypeError('tolerance must be a number of seconds, 0 or more');
  const body = bodyBytes(rawBody);
  const value = Array.isArray(header) ? header.join(',') : (header as string | null | undefined);
  if (typeof value !== 'string' || value.trim() === '') {
    throw new WebhookSignatureError('missing_header', 'No Service-Signature header on the request.');
  }
  const parsed = parseSignatureHeader(value);
  if (parsed === 'bad_format') {
    throw new WebhookSignatureError(
      'bad_format',
      'The Service-Signature header is not of the form t=<unix seconds>,v1=<hex>[,v1=<hex>...].',
    );
  }
  if (parsed === 'no_v1') throw new WebhookSignatureError('no_v1', 'The Service-Signature header has no v1 signature.');
  if (
    !anyMatch(
      secrets,
      parsed.timestamp,
      body,
      parsed.signatures.map((hex) => Buffer.from(hex, 'hex')),
    )
  ) {
    throw new WebhookSignatureError(
      'signature_mismatch',
      'No v1 signature matches. Check that you pass the raw body exactly as received (not re-serialized JSON) and ' +
        'the whsec_ secret of this endpoint, without stray whitespace.',
    );
  }
  const nowSeconds = Math.floor((options.now ?? Date.now)() / 1000);
  const age = nowSeconds - parsed.timestamp;
  if (age > tolerance) {
    throw new WebhookSignatureError(
      'timestamp_outside_tolerance',
      `The signature timestamp is ${age} s old, more than the ${tolerance} s tolerance (a replay?).`,
    );
  }
  if (-age > tolerance) {
    throw new WebhookSignatureError(
      'timestamp_outside_tolerance',
      `The signature timestamp is ${-age} s in the future, more than the ${tolerance} s tolerance (check the clocks).`,
    );
  }
  let event: unknown;
  try {
    event = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch {
    throw new WebhookSignatureError('invalid_payload', 'The signature is valid but the body is not JSON.');
  }
  if (!isEnvelope(event)) {
    throw new WebhookSignatureError(
      'invalid_payload',
      'The signature is valid but the body is not an event envelope: a JSON object with a string id and type, a numeric created and an object data.',
    );
  }
  return event as WebhookEvent<D>;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The envelope of spec section 2: `null`, `[]`, `1` or `{}` parse as JSON but are no event. */
function isEnvelope(value: unknown): boolean {
  return (
    isObject(value) &&
    typeof value.id === 'string' &&
    typeof value.type === 'string' &&
    typeof value.created === 'number' &&
    Number.isFinite(value.created) &&
    isObject(value.data)
  );
}

export interface TestHeaderOptions {
  payload: string | Buffer;
  secret: string | readonly string[];
  /** Unix seconds; default now. */
  timestamp?: number;
}

/** A valid Service-Signature header for `payload`, for your own tests of a webhook receiver. */
export function generateTestHeader(options: TestHeaderOptions): string {
  const secrets = typeof options.secret === 'string' ? [options.secret] : [...options.secret];
  return signatureHeader(secrets, options.timestamp ?? Math.floor(Date.now() / 1000), options.payload);
}

export const webhooks = { constructEvent, generateTestHeader };
