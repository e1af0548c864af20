import { describe, expect, it } from 'vitest';
import { computeSignature, parseSignatureHeader, signatureHeader } from './signature.ts';

/** The one parser of Service-Signature headers (the SDK's verifier uses it): one case per rule. */
describe('parseSignatureHeader', () => {
  const hex = 'ab'.repeat(32);

  it('reads what signatureHeader writes, one v1 per secret', () => {
    const header = signatureHeader(['whsec_a', 'whsec_b'], 1700000000, '{"x":1}');
    expect(parseSignatureHeader(header)).toEqual({
      timestamp: 1700000000,
      signatures: [computeSignature('whsec_a', 1700000000, '{"x":1}'), computeSignature('whsec_b', 1700000000, '{"x":1}')],
    });
  });

  it('ignores unknown schemes and malformed v1 values, trims spaces, lowercases hex', () => {
    expect(parseSignatureHeader(`t=5, v2=zz, v1=${hex.toUpperCase()}, v1=short`)).toEqual({ timestamp: 5, signatures: [hex] });
  });

  it('names a header without any usable v1', () => {
    expect(parseSignatureHeader('t=5,v2=abc')).toBe('no_v1');
    expect(parseSignatureHeader(`t=5,v1=${hex.slice(1)}`)).toBe('no_v1');
  });

  it('refuses a missing, repeated or non-numeric t, items without "=", and empty items', () => {
    for (const bad of [
      `v1=${hex}`,
      `t=1,t=2,v1=${hex}`,
      `t=x,v1=${hex}`,
      `t=1234567890123,v1=${hex}`,
      `t=1,${hex}`,
      `t=1,,v1=${hex}`,
      `t=1,v1=${hex},`,
      `=1,v1=${hex}`,
      '',
    ]) {
      expect(parseSignatureHeader(bad), bad).toBe('bad_format');
    }
  });
});
