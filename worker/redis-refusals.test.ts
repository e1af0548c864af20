import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, type LogLevel } from '../lib/log.ts';
import { createCertificateAuthority } from '../test/harness/pki.ts';
import { freePort, waitFor } from '../test/harness/ports.ts';
import { startRedis, type RedisServer } from '../test/harness/redis.ts';
import { RedisPool } from './pool.ts';
import { describeRedisRefusal } from './redis-refusals.ts';
import type { RedisSettings } from './redis-connection.ts';

/**
 * Issue 41: a worker that Redis refused said only "Stream isn't writeable", at debug level. Against a
 * real redis-server (requirepass, and a TLS port whose certificate the worker does not trust), the
 * cause is logged at error level, and the password is in no line.
 */
const RIGHT = 'right-pass-0123456789';
const WRONG = 'wrong-pass-9876543210';

let redis: RedisServer;
let tlsPort: number;

beforeAll(async () => {
  const ca = createCertificateAuthority('redis-refusal-ca');
  const serving = ca.issueServer('redis', ['127.0.0.1']);
  tlsPort = await freePort();
  redis = await startRedis({
    args: [
      '--requirepass',
      RIGHT,
      '--tls-port',
      String(tlsPort),
      '--tls-cert-file',
      serving.certFile,
      '--tls-key-file',
      serving.keyFile,
      '--tls-ca-cert-file',
      ca.certFile,
      '--tls-auth-clients',
      'no',
    ],
  });
});
afterAll(() => redis?.stop());

/** A pool as the worker makes one, with its log lines collected. */
function poolWith(url: string, password: string): { pool: RedisPool; lines: Array<{ level: LogLevel; line: string }> } {
  const lines: Array<{ level: LogLevel; line: string }> = [];
  const log = createLogger({ name: 'worker', level: 'debug', sink: (line, level) => void lines.push({ level, line }) });
  const settings: RedisSettings = { url, username: undefined, password, tlsCaFile: undefined, sentinel: null };
  return { pool: new RedisPool({ redis: settings, keyPrefix: `refusal-${Date.now()}`, commandTimeoutMs: 1000, log }), lines };
}

describe('the worker says why Redis refused it', () => {
  it('logs a wrong password at error level, naming the variables, never the password', async () => {
    const { pool, lines } = poolWith(redis.url, WRONG);
    try {
      await waitFor(() => lines.some((l) => l.level === 'error' && l.line.includes('WRONGPASS')), {
        timeoutMs: 10_000,
        what: `an error line with WRONGPASS (got ${JSON.stringify(lines)})`,
      });
      const refusal = lines.find((l) => l.line.includes('WRONGPASS'))!;
      expect(refusal.line).toContain('REDIS_PASSWORD');
      expect(pool.ready).toBe(false);
      // ioredis retries every second at most: the same cause is not repeated on every attempt.
      await new Promise((r) => setTimeout(r, 2500));
      expect(lines.filter((l) => l.line.includes('WRONGPASS')).length).toBe(1);
      expect(lines.map((l) => l.line).join('\n')).not.toContain(WRONG);
    } finally {
      await pool.close();
    }
  });

  it('logs an untrusted TLS certificate at error level', async () => {
    const { pool, lines } = poolWith(`rediss://127.0.0.1:${tlsPort}`, RIGHT);
    try {
      await waitFor(() => lines.some((l) => l.level === 'error' && /certificate/i.test(l.line)), {
        timeoutMs: 10_000,
        what: `an error line about the certificate (got ${JSON.stringify(lines)})`,
      });
      expect(lines.find((l) => /certificate/i.test(l.line))!.line).toMatch(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN/);
      expect(lines.map((l) => l.line).join('\n')).not.toContain(RIGHT);
    } finally {
      await pool.close();
    }
  });

  it('with the right password, logs no refusal', async () => {
    const { pool, lines } = poolWith(redis.url, RIGHT);
    try {
      await waitFor(() => pool.ready, { timeoutMs: 10_000, what: 'the pool to be ready' });
      expect(lines.filter((l) => l.level === 'error' || l.level === 'warn')).toEqual([]);
    } finally {
      await pool.close();
    }
  });

  it('tells an expired certificate and an outage apart from what is only a consequence', () => {
    const expired = Object.assign(new Error('certificate has expired'), { code: 'CERT_HAS_EXPIRED' });
    expect(describeRedisRefusal(expired)).toMatchObject({ level: 'error', cause: 'certificate has expired (CERT_HAS_EXPIRED)' });
    expect(describeRedisRefusal(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }))?.level).toBe(
      'warn',
    );
    expect(describeRedisRefusal(new Error("Stream isn't writeable and enableOfflineQueue options is false"))).toBeNull();
    expect(describeRedisRefusal('not an error')).toBeNull();
  });
});
