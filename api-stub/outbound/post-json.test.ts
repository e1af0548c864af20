import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCertificateAuthority, type CertificateAuthority } from '../../test/harness/pki.ts';
import { startSpawnServer, type SpawnServer } from '../../test/fakes/spawn-server.ts';
import { parseAllowHosts, type EgressPolicy } from './egress-guard.ts';
import { OutboundError } from './outbound-error.ts';
import { postJson } from './post-json.ts';
import { loadTrustedCas } from './trust.ts';

let ca: CertificateAuthority;
let otherCa: CertificateAuthority;
let server: SpawnServer;
let untrusted: SpawnServer;
let trusted: string[];
const allowLocal: EgressPolicy = { allowHosts: parseAllowHosts('127.0.0.1,localhost') };

beforeAll(async () => {
  ca = createCertificateAuthority();
  otherCa = createCertificateAuthority('other-ca');
  server = await startSpawnServer({
    key: 'k-123456',
    tls: ca.issueServer('srv', ['127.0.0.1', 'localhost', 'worker.test']),
    roomBase: 'https://r',
  });
  untrusted = await startSpawnServer({ key: 'k-123456', tls: otherCa.issueServer('srv'), roomBase: 'https://r' });
  const bundle = join(ca.dir, 'bundle.pem');
  writeFileSync(bundle, ca.certPem);
  trusted = loadTrustedCas(bundle)!;
});
afterAll(async () => {
  await server.close();
  await untrusted.close();
});

const call = (url: string, extra: Partial<Parameters<typeof postJson>[0]> = {}) =>
  postJson({
    url,
    body: JSON.stringify({ sessionId: 'inv_x' }),
    headers: { authorization: 'Bearer k-123456' },
    signal: AbortSignal.timeout(2_000),
    httpsOnly: true,
    policy: allowLocal,
    ca: trusted,
    ...extra,
  });
const failure = async (p: Promise<unknown>) => {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OutboundError);
  return err as OutboundError;
};

describe('postJson over real HTTPS', () => {
  it('posts to a server whose certificate chains to the extra CA', async () => {
    server.setBehaviour({ kind: 'ok' });
    const res = await call(server.url);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ sessionId: 'inv_x', room_url: expect.any(String) });
  });

  it('fails TLS against a CA it was not told to trust, and without the extra CA', async () => {
    expect((await failure(call(untrusted.url))).kind).toBe('tls');
    expect((await failure(call(server.url, { ca: undefined }))).kind).toBe('tls');
  });

  it('refuses plain http when https is required', async () => {
    const err = await failure(call(server.url.replace('https:', 'http:')));
    expect(err.kind).toBe('https_required');
  });

  it('refuses loopback unless the host is allow-listed, and says why', async () => {
    const err = await failure(call(server.url, { policy: { allowHosts: new Set() } }));
    expect(err.kind).toBe('egress_refused');
    expect(err.message).toMatch(/127\.0\.0\.1, a loopback address/);
  });

  it('refuses loopback spelled as a decimal, hex or IPv4-mapped address', async () => {
    const none: EgressPolicy = { allowHosts: new Set() };
    const before = server.requests.length;
    for (const host of ['2130706433', '0x7f.0.0.1', '[::ffff:127.0.0.1]', '[::1]', '[0:0:0:0:0:ffff:7f00:1]']) {
      const err = await failure(call(`https://${host}:${server.port}/`, { policy: none }));
      expect(err.kind, host).toBe('egress_refused');
      expect(err.message).toMatch(/loopback/);
    }
    expect(server.requests.length).toBe(before);
  });

  it('resolves once and pins the connection to the vetted address (no second lookup can rebind it)', async () => {
    let lookups = 0;
    const policy: EgressPolicy = {
      allowHosts: new Set(['worker.test']),
      resolver: async () => {
        lookups += 1;
        return [{ address: '127.0.0.1', family: 4 }];
      },
    };
    const res = await call(`https://worker.test:${server.port}/`, { policy });
    expect(res.status).toBe(200);
    expect(lookups).toBe(1);
    // Any private answer among several is refused for a host that is not allow-listed.
    const mixed: EgressPolicy = {
      allowHosts: new Set(),
      resolver: async () => [
        { address: '93.184.216.34', family: 4 },
        { address: '10.0.0.5', family: 4 },
      ],
    };
    expect((await failure(call(`https://evil.test:${server.port}/`, { policy: mixed }))).message).toMatch(/10\.0\.0\.5, a private/);
  });

  it('tries every vetted address of a host (IPv6 first, then IPv4) and nothing else', async () => {
    const policy: EgressPolicy = {
      allowHosts: new Set(['worker.test']),
      resolver: async () => [
        { address: '::1', family: 6 },
        { address: '127.0.0.1', family: 4 },
      ],
    };
    const res = await call(`https://worker.test:${server.port}/`, { policy });
    expect(res.status).toBe(200);
  });

  it('gives up on a hanging server at the deadline', async () => {
    server.setBehaviour({ kind: 'hang' });
    const started = Date.now();
    const err = await failure(call(server.url, { signal: AbortSignal.timeout(300) }));
    expect(err.kind).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(4_000); // the 300 ms deadline, not the hang (wide: a loaded machine)
    server.setBehaviour({ kind: 'ok' });
  });

  it('reports a refused connection as refused', async () => {
    const s = await startSpawnServer({ key: 'k', tls: ca.issueServer('gone'), roomBase: 'https://r' });
    await s.refuse();
    expect((await failure(call(s.url))).kind).toBe('refused');
  });

  it('truncates a large answer to the limit', async () => {
    const res = await call(server.url, { maxResponseBytes: 10 });
    expect(res.body).toHaveLength(10);
    expect(res.truncated).toBe(true);
  });
});

describe('loadTrustedCas', () => {
  it('names the variable when the file is missing or holds no certificate', () => {
    expect(() => loadTrustedCas('/nonexistent/ca.pem')).toThrow(/PIPELINE_EXTRA_CA_FILE: cannot read/);
    const empty = join(ca.dir, 'empty.pem');
    writeFileSync(empty, 'nothing');
    expect(() => loadTrustedCas(empty)).toThrow(/holds no PEM/);
    expect(loadTrustedCas(null)).toBeUndefined();
  });
});
