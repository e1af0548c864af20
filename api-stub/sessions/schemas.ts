import { z } from 'zod';

/**
 * The one schema of a session's `metadata` and of the bodies that carry it (create and connect).
 * `metadata` is bounded here, before anything walks it: nesting depth first (checked without
 * recursion, so a hostile depth cannot overflow the stack), then serialized size. Deeper values
 * than MAX_METADATA_DEPTH overflowed recursive code further on (canonical JSON, the spawn call).
 */
export const MAX_METADATA_DEPTH = 32;

/** Nesting depth of a JSON value: 0 for a scalar, 1 for `{}` or `[]`, and so on. Iterative. */
export function jsonDepth(value: unknown, stopAfter = Number.POSITIVE_INFINITY): number {
  let deepest = 0;
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: v, depth } = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    const here = depth + 1;
    if (here > deepest) deepest = here;
    if (deepest > stopAfter) return deepest;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push({ value: child, depth: here });
  }
  return deepest;
}

/** `metadata`: a JSON object at most MAX_METADATA_DEPTH deep and `limitBytes` serialized. */
export function metadataSchema(limitBytes: number) {
  return z.record(z.string(), z.unknown(), { error: 'expected a JSON object' }).superRefine((value, ctx) => {
    const depth = jsonDepth(value, MAX_METADATA_DEPTH);
    if (depth > MAX_METADATA_DEPTH) {
      ctx.addIssue({ code: 'custom', message: `nested more than ${MAX_METADATA_DEPTH} levels deep`, abort: true });
      return;
    }
    const bytes = Buffer.byteLength(JSON.stringify(value));
    if (bytes > limitBytes) ctx.addIssue({ code: 'custom', message: `larger than ${limitBytes} bytes when serialized (${bytes})` });
  });
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
