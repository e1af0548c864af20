import { z } from 'zod';

/**
 * The body of `POST /api/v2/sdk/sessions`. Unknown fields are refused (they are typos more often than
 * not). `publishableKey` is optional here only so that its absence is answered 401 invalid_key
 * (spec section 5, rule 1) rather than 400; a wrong type is 400.
 */
export const createSessionBody = z.strictObject({
  publishableKey: z.string({ error: 'expected a string' }).max(256, 'longer than 256 characters').optional(),
  interviewId: z.string({ error: 'required, a string such as dpl_…' }).min(1, 'must not be empty').max(128, 'longer than 128 characters'),
  metadata: z.record(z.string(), z.unknown(), { error: 'expected a JSON object' }).optional(),
});
export type CreateSessionBody = z.output<typeof createSessionBody>;

/** Idempotency-Key: 1 to 255 visible ASCII characters (a UUID is the usual choice). */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;
