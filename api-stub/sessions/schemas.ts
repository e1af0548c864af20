import { z } from 'zod';
import { MAX_METADATA_DEPTH, metadataSchema as sharedMetadataSchema } from '../../lib/json-metadata.ts';

/** The one schema of `metadata` lives in lib/json-metadata.ts (the worker checks spawns with it too). */
export { MAX_METADATA_DEPTH };

/** `metadata` on creation and connect: bounded in depth and serialized size, kept as given. */
export function metadataSchema(limitBytes: number) {
  return sharedMetadataSchema({ limitBytes });
}

/**
 * The body of `POST /api/v2/sdk/sessions`. Unknown fields are refused (they are typos more often than
 * not). `publishableKey` is optional here only so that its absence is answered 401 invalid_key
 * (spec section 5, rule 1) rather than 400; a wrong type is 400.
 */
export function createSessionBodySchema(metadataLimitBytes: number) {
  return z.strictObject({
    publishableKey: z.string({ error: 'expected a string' }).max(256, 'longer than 256 characters').optional(),
    interviewId: z.string({ error: 'required, a string such as dpl_…' }).min(1, 'must not be empty').max(128, 'longer than 128 characters'),
    metadata: metadataSchema(metadataLimitBytes).optional(),
  });
}
export type CreateSessionBody = z.output<ReturnType<typeof createSessionBodySchema>>;

/** Idempotency-Key: 1 to 255 visible ASCII characters (a UUID is the usual choice). */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;
