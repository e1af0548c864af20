import type { Logger } from '../lib/log.ts';

/**
 * Why Redis would not have the worker, said once at warn/error instead of the bare "Stream isn't
 * writeable" that every command meets afterwards (issue 41): a login refused (wrong password or
 * user: error, it will not fix itself), a TLS certificate not trusted or expired (error), the server
 * unreachable (warn, an outage). Only the error's code and Redis's own reply are logged, never the
 * error object: ioredis puts the AUTH command's arguments (the password) on it.
 */
export interface RefusalNotice {
  level: 'warn' | 'error';
  cause: string;
  hint: string;
}

const LOGIN_REPLIES = /^(WRONGPASS|NOAUTH|NOPERM|ERR invalid password|ERR AUTH)/;
// Node's codes for a certificate the connection would not accept (tls.connect's verify errors) and for a broken handshake.
const TLS_CODES = /^(CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|ERR_TLS_|ERR_SSL_|HOSTNAME_MISMATCH|ERR_OSSL)/;
const NETWORK_CODES = /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|EPIPE)$/;

/** What an ioredis 'error' event means for an operator, or null when it is not worth a line (a consequence of one). */
export function describeRedisRefusal(err: unknown): RefusalNotice | null {
  if (!(err instanceof Error)) return null;
  const raw = (err as Error & { code?: unknown }).code;
  const code = typeof raw === 'string' ? raw : '';
  const message = err.message.slice(0, 200);
  if (LOGIN_REPLIES.test(message)) {
    // Redis's reply names no credential ("WRONGPASS invalid username-password pair or user is disabled.").
    return {
      level: 'error',
      cause: message,
      hint: "check REDIS_USERNAME/REDIS_PASSWORD (or the user and password in REDIS_URL) against the server's ACL or requirepass",
    };
  }
  if (TLS_CODES.test(code)) {
    return {
      level: 'error',
      cause: `${message} (${code})`,
      hint: "check the server's certificate (expiry, names) and REDIS_TLS_CA_FILE; rediss:// needs a TLS port",
    };
  }
  if (NETWORK_CODES.test(code)) return { level: 'warn', cause: `${message} (${code})`, hint: 'the session store is unreachable; retrying' };
  return null;
}

/** Logs each distinct refusal of one connection when it first happens, and again at most once a minute while it lasts. */
export function logRedisRefusals(
  client: { on(event: 'error', listener: (err: unknown) => void): unknown; on(event: 'ready', listener: () => void): unknown },
  log: Logger,
  role: string,
): void {
  let last = '';
  let loggedAt = 0;
  client.on('error', (err) => {
    const notice = describeRedisRefusal(err);
    if (!notice) return;
    const now = Date.now();
    if (notice.cause === last && now - loggedAt < 60_000) return;
    last = notice.cause;
    loggedAt = now;
    log[notice.level](`the worker's ${role} connection to Redis failed: ${notice.cause}`, { hint: notice.hint });
  });
  client.on('ready', () => {
    if (last !== '') log.info(`the worker's ${role} connection to Redis is up again`);
    last = '';
  });
}
