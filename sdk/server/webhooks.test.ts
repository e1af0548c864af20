import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import Stripe from 'stripe';
import { constructEvent, generateTestHeader, WebhookSignatureError, type WebhookErrorCode } from './webhooks.ts';
import { signatureHeader } from '../../lib/signature.ts';

const secret = 'whsec_test_secret_0123456789';
const payload = JSON.stringify({
  id: 'evt_1',
  type: 'interview.completed',
  created: 1_795_000_000,
  data: { sessionId: 'inv_1', interviewId: 'dpl_1', metadata: { a: 1 }, completedAt: '2026-11-23T10:00:00Z' },
});
const t = 1_795_000_000;
const nowAt = (seconds: number) => () => seconds * 1000;
const stripe = new Stripe('sk_test_unused');

function failure(fn: () => unknown): WebhookErrorCode {
  try {
    fn();
  } catch (err) {
    if (err instanceof WebhookSignatureError) return err.code;
    throw err;
  }
  throw new Error('expected a WebhookSignatureError');
}

describe('webhooks.constructEvent', () => {
  it('verifies a header made by an independent HMAC computation and returns the event', () => {
    const v1 = createHmac('sha256', secret).update(`${t}.${payload}`, 'utf8').digest('hex');
    const event = constructEvent(payload, `t=${t},v1=${v1}`, secret, 300, { now: nowAt(t) });
    expect(event.type).toBe('interview.completed');
    expect(event.data.sessionId).toBe('inv_1');
  });

  it('accepts a Buffer or Uint8Array body and any matching v1 among several, and any of several secrets', () => {
    const header = signatureHeader(['whsec_old_000000000', secret], t, payload);
    expect(constructEvent(Buffer.from(payload), header, secret, 300, { now: nowAt(t) }).id).toBe('evt_1');
    expect(constructEvent(new TextEncoder().encode(payload), header, 'whsec_old_000000000', 300, { now: nowAt(t) }).id).toBe('evt_1');
    const single = signatureHeader([secret], t, payload);
    expect(constructEvent(payload, single, ['whsec_other_00000000', secret], 300, { now: nowAt(t) }).id).toBe('evt_1');
  });

  it('accepts a header split over several values (string[]), as some frameworks give them', () => {
    const [first, ...rest] = signatureHeader(['whsec_old_000000000', secret], t, payload).split(',');
    expect(constructEvent(payload, [first!, rest.join(',')], secret, 300, { now: nowAt(t) }).id).toBe('evt_1');
  });

  it('ignores unknown schemes beside v1 (a future v2)', () => {
    const header = `${signatureHeader([secret], t, payload)},v2=zzz`;
    expect(constructEvent(payload, header, secret, 300, { now: nowAt(t) }).id).toBe('evt_1');
  });

  it('has a distinct code per failure', () => {
    const good = signatureHeader([secret], t, payload);
    const now = { now: nowAt(t) };
    expect(failure(() => constructEvent(payload, undefined, secret, 300, now))).toBe('missing_header');
    expect(failure(() => constructEvent(payload, '', secret, 300, now))).toBe('missing_header');
    expect(failure(() => constructEvent(payload, 'garbage', secret, 300, now))).toBe('bad_format');
    expect(failure(() => constructEvent(payload, 'v1=abc', secret, 300, now))).toBe('bad_format');
    expect(failure(() => constructEvent(payload, `t=${t}`, secret, 300, now))).toBe('no_v1');
    expect(failure(() => constructEvent(payload, `t=${t},v0=${'a'.repeat(64)}`, secret, 300, now))).toBe('no_v1');
    expect(failure(() => constructEvent(payload, good, 'whsec_wrong_00000000', 300, now))).toBe('signature_mismatch');
    // Re-serialized JSON (whitespace changed) breaks the signature.
    expect(failure(() => constructEvent(JSON.stringify(JSON.parse(payload), null, 2), good, secret, 300, now))).toBe('signature_mismatch');
    expect(failure(() => constructEvent(payload, good, secret, 300, { now: nowAt(t + 301) }))).toBe('timestamp_outside_tolerance');
    expect(failure(() => constructEvent(payload, good, secret, 300, { now: nowAt(t - 301) }))).toBe('timestamp_outside_tolerance');
    expect(failure(() => constructEvent(JSON.parse(payload), good, secret, 300, now))).toBe('body_not_raw');
    const notJson = 'not json';
    expect(failure(() => constructEvent(notJson, signatureHeader([secret], t, notJson), secret, 300, now))).toBe('invalid_payload');
    // Valid JSON, validly signed, but no event envelope (issue 41: `null` was returned as the event).
    for (const body of [
      'null',
      '[]',
      '1',
      '"evt"',
      'true',
      '{}',
      '{"id":"evt_1","type":"interview.completed","created":1,"data":null}',
      '{"id":1,"type":"t","created":1,"data":{}}',
    ]) {
      expect(
        failure(() => constructEvent(body, signatureHeader([secret], t, body), secret, 300, now)),
        body,
      ).toBe('invalid_payload');
    }
  });

  it('accepts timestamps exactly at the tolerance on both sides, and says which side failed', () => {
    const good = signatureHeader([secret], t, payload);
    expect(constructEvent(payload, good, secret, 300, { now: nowAt(t + 300) }).id).toBe('evt_1');
    expect(constructEvent(payload, good, secret, 300, { now: nowAt(t - 300) }).id).toBe('evt_1');
    expect(() => constructEvent(payload, good, secret, 10, { now: nowAt(t + 11) })).toThrow(/old/);
    expect(() => constructEvent(payload, good, secret, 10, { now: nowAt(t - 11) })).toThrow(/future/);
  });

  it('refuses an empty secret list as a programming error', () => {
    expect(() => constructEvent(payload, 't=1,v1=' + 'a'.repeat(64), [])).toThrow(TypeError);
  });
});

describe('cross-check with the stripe package (the same construction)', () => {
  it("our signatures verify with stripe's verifier", () => {
    const now = Math.floor(Date.now() / 1000);
    for (const body of [payload, '{"a":1}', JSON.stringify({ text: 'héllo ☃ \n "quoted"' })]) {
      const header = generateTestHeader({ payload: body, secret });
      expect(stripe.webhooks.constructEvent(body, header, secret, 300)).toEqual(JSON.parse(body));
      // Rotation: a header with two v1 values verifies with either secret in stripe too.
      const rotated = signatureHeader(['whsec_previous_000000', secret], now, body);
      expect(stripe.webhooks.constructEvent(body, rotated, 'whsec_previous_000000', 300)).toEqual(JSON.parse(body));
    }
  });

  it("stripe's test headers verify with ours, and a tampered body fails both", () => {
    const header = stripe.webhooks.generateTestHeaderString({ payload, secret });
    expect(constructEvent(payload, header, secret).id).toBe('evt_1');
    const tampered = payload.replace('"a":1', '"a":2');
    expect(() => stripe.webhooks.constructEvent(tampered, header, secret)).toThrow();
    expect(failure(() => constructEvent(tampered, header, secret))).toBe('signature_mismatch');
  });
});
