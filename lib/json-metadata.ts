import { z } from 'zod';

/**
 * The one schema of a session's `metadata`, shared by the api-stub (creation, connect) and the worker
 * (the spawn body, the record kept in Redis). The spec returns metadata "unchanged", so it is
 * validated, never rebuilt: the object the JSON parser made is kept as it is. That matters for a key
 * such as `__proto__`: JSON.parse makes it an own data property, but copying the object key by key
 * (as `z.record` does, `out[key] = value`) would run the `__proto__` setter instead, change that
 * object's prototype and drop the key. Keeping the parser's object keeps `__proto__`, `constructor`
 * and `prototype` as plain keys that go into storage, webhooks and answers verbatim.
 *
 * Depth is bounded before anything walks the value (checked without recursion, so a hostile depth
 * cannot overflow the stack): deeper values overflowed recursive code further on.
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

/** A JSON object as JSON.parse makes it: not null, not an array, with Object.prototype. */
function isJsonObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype;
}

export interface MetadataSchemaOptions {
  /** Largest serialized size in bytes; no bound when absent (the body limit bounds it). */
  limitBytes?: number;
}

/** `metadata`: a JSON object at most MAX_METADATA_DEPTH deep (and `limitBytes` serialized), kept as given. */
export function metadataSchema(options: MetadataSchemaOptions = {}) {
  return z.custom<Record<string, unknown>>(isJsonObject, { error: 'expected a JSON object' }).superRefine((value, ctx) => {
    const depth = jsonDepth(value, MAX_METADATA_DEPTH);
    if (depth > MAX_METADATA_DEPTH) {
      ctx.addIssue({ code: 'custom', message: `nested more than ${MAX_METADATA_DEPTH} levels deep`, abort: true });
      return;
    }
    if (options.limitBytes === undefined) return;
    const bytes = Buffer.byteLength(JSON.stringify(value));
    if (bytes > options.limitBytes)
      ctx.addIssue({ code: 'custom', message: `larger than ${options.limitBytes} bytes when serialized (${bytes})` });
  });
}
