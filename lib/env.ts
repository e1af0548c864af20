/**
 * Small pure readers of environment variables, shared by every component's config module.
 * Each takes the environment as an argument (never process.env), treats an empty or blank value
 * as unset, and throws a ConfigError whose message starts with the variable's name. A component's
 * loadConfig keeps its own defaults and cross-field rules; these only read one variable each.
 */
export class ConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, problem: string) {
    super(`${variable}: ${problem}`);
    this.name = 'ConfigError';
    this.variable = variable;
  }
}

export type Env = Readonly<Record<string, string | undefined>>;

/** The trimmed value, or undefined when the variable is unset or blank. */
export function optionalString(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/** The trimmed value; `hint` says what the variable is for when it is missing. */
export function requiredString(env: Env, name: string, options: { hint: string }): string {
  const value = optionalString(env, name);
  if (value === undefined) throw new ConfigError(name, `is required (${options.hint})`);
  return value;
}

/** A whole number within an inclusive range, or the default when unset. */
export function intVar(env: Env, name: string, options: { default: number; min: number; max: number }): number {
  const raw = optionalString(env, name);
  if (raw === undefined) return options.default;
  if (!/^-?\d+$/.test(raw)) throw new ConfigError(name, `expected an integer, got ${JSON.stringify(raw)}`);
  const value = Number(raw);
  if (value < options.min || value > options.max) {
    throw new ConfigError(name, `expected an integer from ${options.min} to ${options.max}, got ${value}`);
  }
  return value;
}

/** Any finite number (decimals allowed) strictly above `above`, or the default when unset. */
export function numberVar(env: Env, name: string, options: { default: number; above: number; max?: number }): number {
  const raw = optionalString(env, name);
  if (raw === undefined) return options.default;
  const value = Number(raw);
  const max = options.max ?? Number.MAX_SAFE_INTEGER;
  if (!Number.isFinite(value)) throw new ConfigError(name, `expected a number, got ${JSON.stringify(raw)}`);
  if (value <= options.above || value > max) {
    throw new ConfigError(
      name,
      `expected a number above ${options.above}${options.max === undefined ? '' : ` and at most ${max}`}, got ${value}`,
    );
  }
  return value;
}

/** true/yes/1 or false/no/0 (any case), or the default when unset. */
export function boolVar(env: Env, name: string, options: { default: boolean }): boolean {
  const raw = optionalString(env, name);
  if (raw === undefined) return options.default;
  if (/^(1|true|yes)$/i.test(raw)) return true;
  if (/^(0|false|no)$/i.test(raw)) return false;
  throw new ConfigError(name, `expected true or false, got ${JSON.stringify(raw)}`);
}

export interface UrlOptions {
  /** Accepted schemes without the colon, e.g. ['https', 'http']. */
  schemes: readonly string[];
  /** Refuse a ?query or #fragment (base URLs that paths are appended to). Default: allowed. */
  allowQuery?: boolean;
  /** Keep trailing slashes; by default they are removed so callers can append `/path`. */
  keepTrailingSlash?: boolean;
}

/**
 * An absolute URL with one of the given schemes, or undefined when unset. An unparsable value is
 * not echoed: URLs may carry credentials (redis://:password@host).
 */
export function urlVar(env: Env, name: string, options: UrlOptions): string | undefined {
  const raw = optionalString(env, name);
  return raw === undefined ? undefined : checkUrl(name, raw, options);
}

/** Like urlVar, but falls back to `default` when unset, and without a default the variable is required. */
export function requiredUrl(env: Env, name: string, options: UrlOptions & { default?: string }): string {
  const raw = optionalString(env, name) ?? options.default;
  if (raw === undefined) throw new ConfigError(name, `is required (a URL with scheme ${options.schemes.join(' or ')})`);
  return checkUrl(name, raw, options);
}

function checkUrl(name: string, raw: string, options: UrlOptions): string {
  const schemes = options.schemes.join(' or ');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be a URL with scheme ${schemes}, and this value does not parse as a URL`);
  }
  if (!options.schemes.includes(url.protocol.slice(0, -1))) {
    throw new ConfigError(name, `must be a URL with scheme ${schemes}, got ${JSON.stringify(url.protocol)}`);
  }
  if (options.allowQuery === false && (url.search || url.hash)) throw new ConfigError(name, 'must not carry a query or fragment');
  return options.keepTrailingSlash ? raw : raw.replace(/\/+$/, '');
}
