/**
 * Numbers in a JSON text that JavaScript cannot carry through unchanged. JSON.parse turns `1e309`
 * into Infinity (written back as `null`) and `18446744073709551617` into the nearest double (written
 * back as `18446744073709552000`): the value a client sent would come back different. Such numbers are
 * refused with 400, naming their path, instead of being stored altered.
 *
 * The scan reads the raw text once, left to right, with an explicit stack (no recursion, so any depth
 * the body limit allows is fine) and keeps the path of the value being read.
 */
export interface UnsafeNumber {
  /** Dotted path from the body's root, e.g. `metadata.ids.3`; empty for a bare number body. */
  path: string;
  /** The number as written (cut to 40 characters). */
  text: string;
  reason: 'overflow' | 'underflow' | 'unsafe_integer';
}

const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
const STRING = /"(?:[^"\\]|\\.)*"/y;

interface Frame {
  kind: 'object' | 'array';
  /** Current key (object) or index (array). */
  at: string | number;
  /** In an object: the next string is a key, not a value. */
  expectKey: boolean;
}

/** A decimal number's exact value as `sign digits e exponent`, with no leading or trailing zeros. */
function exactDecimal(text: string): string {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m) return text;
  const digits = `${m[2]}${m[3] ?? ''}`;
  let exponent = Number(m[4] ?? 0) - (m[3]?.length ?? 0);
  const trimmed = digits.replace(/^0+/, '');
  if (trimmed === '') return '0';
  const significant = trimmed.replace(/0+$/, '');
  exponent += trimmed.length - significant.length;
  return `${m[1]}${significant}e${exponent}`;
}

/**
 * Why `text` does not come back as written, or null when it does. Integers must come back exact:
 * JSON.stringify writes the shortest digits that name the same double, so `18446744073709551617`
 * (and even `18446744073709551616`) comes back as `18446744073709552000`. A fraction is taken as its
 * nearest double, as every JSON parser in JavaScript does; only overflow and underflow refuse it.
 */
export function numberProblem(text: string): UnsafeNumber['reason'] | null {
  const value = Number(text);
  if (!Number.isFinite(value)) return 'overflow';
  const mantissa = text.replace(/[eE].*$/, '');
  if (value === 0) return /[1-9]/.test(mantissa) ? 'underflow' : null;
  if (!/[.eE]/.test(text) && !Number.isSafeInteger(value) && exactDecimal(String(value).replace('e+', 'e')) !== exactDecimal(text))
    return 'unsafe_integer';
  return null;
}

/** The first number in a valid JSON text that does not round-trip, or null. */
export function findUnsafeNumber(json: string): UnsafeNumber | null {
  const stack: Frame[] = [];
  const path = (): string => stack.map((f) => String(f.at)).join('.');
  let i = 0;
  while (i < json.length) {
    const c = json[i]!;
    const top = stack[stack.length - 1];
    if (c === '"') {
      STRING.lastIndex = i;
      const m = STRING.exec(json);
      if (!m) return null; // not valid JSON: the parser has already said so
      if (top?.kind === 'object' && top.expectKey) {
        top.at = JSON.parse(m[0]) as string;
        top.expectKey = false;
      }
      i += m[0].length;
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(json);
      if (!m) return null;
      const reason = numberProblem(m[0]);
      if (reason) return { path: path(), text: m[0].length > 40 ? `${m[0].slice(0, 37)}...` : m[0], reason };
      i += m[0].length;
    } else if (c === '{' || c === '[') {
      stack.push(c === '{' ? { kind: 'object', at: '', expectKey: true } : { kind: 'array', at: 0, expectKey: false });
      i++;
    } else if (c === '}' || c === ']') {
      stack.pop();
      i++;
    } else if (c === ',') {
      if (top?.kind === 'object') top.expectKey = true;
      else if (top?.kind === 'array') top.at = (top.at as number) + 1;
      i++;
    } else {
      i++;
    }
  }
  return null;
}

/** The client-facing sentence for an unsafe number. */
export function describeUnsafeNumber(n: UnsafeNumber): string {
  const path = n.path.length > 120 ? `...${n.path.slice(-117)}` : n.path;
  const where = path ? `${path}: ` : '';
  const why =
    n.reason === 'overflow'
      ? 'is too large for a JSON number in JavaScript (it would come back as null)'
      : n.reason === 'underflow'
        ? 'is too small for a JSON number in JavaScript (it would come back as 0)'
        : 'is an integer JavaScript cannot hold exactly (it would come back rounded)';
  return `${where}the number ${n.text} ${why}; send it as a string.`;
}
