import { describe, expect, it } from 'vitest';
import { createLogger, redact } from './log.ts';

describe('redact', () => {
  it('masks secret keys, webhook secrets and bearer tokens but keeps their kind', () => {
    const text = 'key sk_test_abcdef123456 secret whsec_zzzzzzzzzz auth Bearer eyJhbGciOi.abc';
    const out = redact(text);
    expect(out).toBe('key sk_[redacted] secret whsec_[redacted] auth Bearer [redacted]');
  });

  it('leaves publishable keys and ids alone', () => {
    expect(redact('pk_test_abc inv_123 dpl_456')).toBe('pk_test_abc inv_123 dpl_456');
  });
});

describe('createLogger', () => {
  it('drops fields whose names look secret and masks secrets inside other fields', () => {
    const lines: string[] = [];
    const log = createLogger({ name: 't', sink: (l) => lines.push(l) });
    log.info('spawn with Bearer abcdefgh', { pipelineToken: 'plain-token', nested: { note: 'sk_test_1234567890' } });
    const record = JSON.parse(lines[0] ?? '{}');
    expect(record.msg).toBe('spawn with Bearer [redacted]');
    expect(record.pipelineToken).toBe('[redacted]');
    expect(record.nested.note).toBe('sk_[redacted]');
    expect(lines[0]).not.toContain('plain-token');
  });

  it('honours the level threshold', () => {
    const lines: string[] = [];
    const log = createLogger({ name: 't', level: 'warn', sink: (l) => lines.push(l) });
    log.info('quiet');
    log.warn('loud');
    expect(lines).toHaveLength(1);
  });
});
