import fc from 'fast-check';

/**
 * The model fake's fault mode (FakeOpenAIOptions.malformed): with probability `rate`, an answer
 * is replaced by a malformed one: fields missing, of the wrong type, huge, out of order, or not
 * JSON at all. Everything comes from `seed` (a small PRNG for the choices, fast-check for the
 * junk values), so a failing run is repeated by running it again.
 */
export interface MalformedMode {
  seed: number;
  /** Share of answers that are malformed, 0..1. */
  rate: number;
  /** Another share for some endpoints (a realtime stream that breaks falls back to batch, so it can take more). */
  rates?: Partial<Record<'chat' | 'stt' | 'tts' | 'stt-stream', number>>;
}

/** Long enough to break any bound the worker keeps on a provider's text. */
export const HUGE = 'x'.repeat(300_000);

export class FaultPicker {
  private state: number;
  private readonly rate: number;
  private readonly junkValues: unknown[];
  private next = 0;

  constructor(mode: MalformedMode) {
    this.state = mode.seed >>> 0 || 1;
    this.rate = mode.rate;
    // Junk of every JSON type, plus what JSON cannot say (undefined: the field is absent).
    const junk = fc.oneof(
      fc.constant(undefined),
      fc.constant(null),
      fc.jsonValue({ maxDepth: 2 }),
      fc.string({ maxLength: 20 }),
      fc.constant(HUGE),
      fc.integer(),
    );
    this.junkValues = fc.sample(junk, { seed: mode.seed, numRuns: 200 });
  }

  private random(): number {
    this.state = (Math.imul(this.state, 1_664_525) + 1_013_904_223) >>> 0;
    return this.state / 2 ** 32;
  }

  /** Whether this answer is malformed. */
  strike(): boolean {
    return this.rate > 0 && this.random() < this.rate;
  }

  pick<T>(options: readonly T[]): T {
    return options[Math.floor(this.random() * options.length)]!;
  }

  /** A value of any type, or undefined (then the field is left out). */
  junk(): unknown {
    return this.junkValues[this.next++ % this.junkValues.length];
  }
}

/** `base` with one of its fields (a dotted path) set to `value`, or removed when value is undefined. */
export function withField(base: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const copy = structuredClone(base);
  const keys = path.split('.');
  let at: Record<string, unknown> = copy;
  for (const key of keys.slice(0, -1)) {
    const next = at[key];
    if (typeof next !== 'object' || next === null) return copy;
    at = next as Record<string, unknown>;
  }
  const last = keys.at(-1)!;
  if (value === undefined) delete at[last];
  else at[last] = value;
  return copy;
}

/** A whole JSON body that is wrong as a whole: not an object, or not JSON. */
export function wrongBody(picker: FaultPicker): string {
  return picker.pick([
    'null',
    '[]',
    '"text"',
    '42',
    '{',
    'not json at all',
    '<html>502 Bad Gateway</html>',
    JSON.stringify(picker.junk()) ?? '',
  ]);
}
