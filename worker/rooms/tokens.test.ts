import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signJwt, verifyJwt } from './tokens.ts';

describe('HS256 tokens', () => {
  it('matches an independently computed signature', () => {
    const token = signJwt({ r: 'room', exp: 2000 }, 'secret');
    const [h, p, s] = token.split('.');
    expect(JSON.parse(Buffer.from(h!, 'base64url').toString())).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(s).toBe(createHmac('sha256', 'secret').update(`${h}.${p}`).digest('base64url'));
  });

  it('is deterministic, so a repeated spawn gets the same token', () => {
    expect(signJwt({ a: 1, exp: 5 }, 'k')).toBe(signJwt({ a: 1, exp: 5 }, 'k'));
  });

  it('verifies, and refuses tampering, another key, expiry and garbage', () => {
    const token = signJwt({ room: 'x', exp: 2000 }, 'k');
    expect(verifyJwt(token, 'k', 1000)).toEqual({ ok: true, claims: { room: 'x', exp: 2000 } });
    expect(verifyJwt(token, 'other', 1000)).toEqual({ ok: false, reason: 'bad_signature' });
    expect(verifyJwt(token, 'k', 2000)).toEqual({ ok: false, reason: 'expired' });
    const [h, , s] = token.split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ room: 'y', exp: 2000 })).toString('base64url')}.${s}`;
    expect(verifyJwt(forged, 'k', 1000)).toEqual({ ok: false, reason: 'bad_signature' });
    expect(verifyJwt('a.b', 'k', 1000)).toEqual({ ok: false, reason: 'malformed' });
    expect(verifyJwt(signJwt({ room: 'x' }, 'k'), 'k', 1000)).toEqual({ ok: false, reason: 'expired' });
  });

  it('accepts only the canonical base64url spelling of a valid token (issue 41)', () => {
    const token = signJwt({ room: 'x', exp: 2000 }, 'k');
    const [h, p, s] = token.split('.') as [string, string, string];
    // The signature is 32 bytes: 43 characters, the last one carrying 2 spare bits.
    const last = s.at(-1)!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const spareBitsSet = alphabet[alphabet.indexOf(last) ^ 1]!;
    const variants = [
      `${token}=`,
      `${token}==`,
      `${h}.${p}.${s.slice(0, -1)}${spareBitsSet}`,
      `${h}.${p}=.${s}`,
      `${h}.${p}.${s.slice(0, 10)}+${s.slice(10)}`,
    ];
    for (const variant of variants) expect(verifyJwt(variant, 'k', 1000), variant).toEqual({ ok: false, reason: 'malformed' });
    expect(verifyJwt(token, 'k', 1000).ok).toBe(true);
  });
});
