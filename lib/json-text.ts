/**
 * JSON text that keeps every value as it was parsed. JSON.stringify writes -0 as `0`, so a metadata
 * value `-0` (which JSON.parse reads as -0) came back as `0`; the spec returns metadata "unchanged".
 * The replacer hands -0 back as the raw text `-0` (JSON.rawJSON, Node 21+); everything else is
 * JSON.stringify's own output.
 */
type RawJson = (text: string) => unknown;
const rawJSON = (JSON as unknown as { rawJSON: RawJson }).rawJSON;

/** A JSON.stringify replacer (also Express's `json replacer` setting) that writes -0 as `-0`. */
export function keepNegativeZero(_key: string, value: unknown): unknown {
  return Object.is(value, -0) ? rawJSON('-0') : value;
}

/** JSON.stringify, except that -0 stays `-0`. */
export function stringifyJson(value: unknown): string {
  return JSON.stringify(value, keepNegativeZero);
}
