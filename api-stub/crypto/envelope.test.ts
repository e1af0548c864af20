import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openSecret, sealSecret, SecretDecryptError } from './envelope.ts';
import { assertKeyForSelfHost, loadKeyProvider, localKeyProvider } from './key-provider.ts';

const kek = localKeyProvider(randomBytes(32));
const token = 'worker-token-0123456789abcdef';

describe('pipeline token envelope', () => {
  it('round-trips and never contains the plaintext', async () => {
    const sealed = await sealSecret(token, 'ws_a', kek);
    expect(sealed.startsWith('penv1:')).toBe(true);
    expect(sealed).not.toContain(token);
    expect(Buffer.from(sealed.slice(6), 'base64url').toString()).not.toContain(token);
    expect(await openSecret(sealed, 'ws_a', kek)).toBe(token);
  });

  it('uses a fresh data key per secret: the same token seals differently each time', async () => {
    const a = await sealSecret(token, 'ws_a', kek);
    const b = await sealSecret(token, 'ws_a', kek);
    expect(a).not.toBe(b);
    const wk = (s: string) => (JSON.parse(Buffer.from(s.slice(6), 'base64url').toString()) as { wk: string }).wk;
    expect(wk(a)).not.toBe(wk(b));
  });

  it('binds the workspace id: a ciphertext moved to another workspace fails', async () => {
    const sealed = await sealSecret(token, 'ws_a', kek);
    await expect(openSecret(sealed, 'ws_b', kek)).rejects.toBeInstanceOf(SecretDecryptError);
  });

  it('refuses another key, a tampered ciphertext and garbage, without echoing the token', async () => {
    const sealed = await sealSecret(token, 'ws_a', kek);
    const other = localKeyProvider(randomBytes(32));
    await expect(openSecret(sealed, 'ws_a', other)).rejects.toThrow(/sealed with key local\//);
    const body = JSON.parse(Buffer.from(sealed.slice(6), 'base64url').toString()) as Record<string, string>;
    const ct = Buffer.from(body.ct!, 'base64');
    ct[0] = ct[0]! ^ 1;
    const tampered = 'penv1:' + Buffer.from(JSON.stringify({ ...body, ct: ct.toString('base64') })).toString('base64url');
    const err = (await openSecret(tampered, 'ws_a', kek).catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(SecretDecryptError);
    expect(err.message).not.toContain(token);
    await expect(openSecret('penv1:!!!', 'ws_a', kek)).rejects.toThrow(/corrupt/);
    await expect(openSecret(token, 'ws_a', kek)).rejects.toThrow(/unknown format/);
  });
});

describe('loadKeyProvider', () => {
  it('reads a base64 32-byte key and derives a stable key id', () => {
    const raw = randomBytes(32).toString('base64');
    const a = loadKeyProvider({ PIPELINE_KEK: raw });
    const b = loadKeyProvider({ PIPELINE_KEK: raw });
    expect(a.source).toBe('env');
    expect(a.provider?.keyId).toBe(b.provider?.keyId);
  });

  it('rejects a malformed or short key, naming the variable', () => {
    expect(() => loadKeyProvider({ PIPELINE_KEK: 'not base64!' })).toThrow(/PIPELINE_KEK/);
    expect(() => loadKeyProvider({ PIPELINE_KEK: randomBytes(16).toString('base64') })).toThrow(/32 bytes, got 16/);
  });

  it('generates a throwaway key only in explicit dev mode, with a warning', () => {
    const lines: string[] = [];
    const log = { warn: (m: string) => lines.push(m) } as unknown as Parameters<typeof loadKeyProvider>[1];
    const dev = loadKeyProvider({ PIPELINE_KEK_DEV: '1' }, log);
    expect(dev.source).toBe('dev-generated');
    expect(dev.provider).not.toBeNull();
    expect(lines.join()).toMatch(/throwaway/);
    const missing = loadKeyProvider({});
    expect(missing.provider).toBeNull();
    expect(() => assertKeyForSelfHost(missing, 0)).not.toThrow();
    expect(() => assertKeyForSelfHost(missing, 2)).toThrow(/PIPELINE_KEK: not set, but 2 workspace/);
  });
});
