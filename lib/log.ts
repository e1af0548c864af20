/**
 * A small structured logger: one JSON object per line on stdout (stderr for errors).
 * Secrets never reach a log line: known key shapes and bearer tokens are masked in every string,
 * and fields whose names look secret are dropped to "[redacted]".
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

const SECRET_PATTERNS: Array<[RegExp, string]> = [
  [/\b(sk|whsec|rk)_[A-Za-z0-9_]{6,}/g, '$1_[redacted]'],
  [/\b(Bearer)\s+[A-Za-z0-9._~+/=-]{4,}/gi, '$1 [redacted]'],
  [/\bsk-[A-Za-z0-9_-]{8,}/g, 'sk-[redacted]'],
];
const SECRET_FIELD = /(token|secret|password|authorization|api[-_]?key|credential|private)/i;

export function redact(text: string): string {
  let out = text;
  for (const [pattern, replacement] of SECRET_PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

function clean(value: unknown, depth = 0): unknown {
  if (depth > 6) return '[deep]';
  if (typeof value === 'string') return redact(value);
  if (value instanceof Error) return { name: value.name, message: redact(value.message) };
  if (Array.isArray(value)) return value.map((v) => clean(v, depth + 1));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = SECRET_FIELD.test(k) ? '[redacted]' : clean(v, depth + 1);
    return out;
  }
  return value;
}

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

export interface LoggerOptions {
  name: string;
  level?: LogLevel;
  /** Where lines go; tests pass a collector to assert on what would have been logged. */
  sink?: (line: string, level: LogLevel) => void;
}

const defaultSink = (line: string, level: LogLevel): void => {
  (level === 'error' ? process.stderr : process.stdout).write(line + '\n');
};

export function createLogger(options: LoggerOptions, bound: Record<string, unknown> = {}): Logger {
  const min = ORDER[options.level ?? (process.env.LOG_LEVEL as LogLevel | undefined) ?? 'info'] ?? ORDER.info;
  const sink = options.sink ?? defaultSink;
  const write = (level: LogLevel, msg: string, fields?: Record<string, unknown>): void => {
    if (ORDER[level] < min) return;
    const record = {
      time: new Date().toISOString(),
      level,
      name: options.name,
      msg: redact(msg),
      ...(clean({ ...bound, ...fields }) as object),
    };
    sink(JSON.stringify(record), level);
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    child: (fields) => createLogger(options, { ...bound, ...fields }),
  };
}

/** A logger that writes nothing, for tests and benchmarks that do not look at logs. */
export const silentLogger: Logger = createLogger({ name: 'silent', sink: () => undefined });
