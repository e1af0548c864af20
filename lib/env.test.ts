import { describe, expect, it } from 'vitest';
import { boolVar, ConfigError, intVar, numberVar, optionalString, requiredString, requiredUrl, urlVar } from './env.ts';

function thrown(read: () => unknown): ConfigError {
  try {
    read();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('ConfigError', () => {
  it('starts its message with the variable and keeps the variable as a field', () => {
    const err = new ConfigError('PORT', 'is wrong');
    expect(err).toBeInstanceOf(Error);
    expect([err.name, err.message, err.variable]).toEqual(['ConfigError', 'PORT: is wrong', 'PORT']);
  });
});

describe('string readers', () => {
  it('trim, and treat blank as unset', () => {
    expect(optionalString({ A: '  x ' }, 'A')).toBe('x');
    expect(optionalString({ A: '   ' }, 'A')).toBeUndefined();
    expect(optionalString({}, 'A')).toBeUndefined();
    expect(requiredString({ A: ' y' }, 'A', { hint: 'why' })).toBe('y');
    expect(thrown(() => requiredString({ A: '' }, 'A', { hint: 'the token' })).message).toBe('A: is required (the token)');
  });
});

describe('intVar', () => {
  const range = { default: 7, min: -5, max: 10 };
  it('reads whole numbers in range and falls back to the default', () => {
    expect(intVar({ N: ' 10 ' }, 'N', range)).toBe(10);
    expect(intVar({ N: '-5' }, 'N', range)).toBe(-5);
    expect(intVar({ N: '' }, 'N', range)).toBe(7);
  });
  it.each([
    ['1.5', 'N: expected an integer, got "1.5"'],
    ['ten', 'N: expected an integer, got "ten"'],
    ['11', 'N: expected an integer from -5 to 10, got 11'],
    ['-6', 'N: expected an integer from -5 to 10, got -6'],
  ])('refuses %s', (raw, message) => {
    const err = thrown(() => intVar({ N: raw }, 'N', range));
    expect([err.variable, err.message]).toEqual(['N', message]);
  });
});

describe('numberVar', () => {
  it('accepts decimals strictly above the bound', () => {
    expect(numberVar({ S: '0.5' }, 'S', { default: 2, above: 0 })).toBe(0.5);
    expect(numberVar({}, 'S', { default: 2, above: 0 })).toBe(2);
    expect(thrown(() => numberVar({ S: '0' }, 'S', { default: 2, above: 0 })).message).toBe('S: expected a number above 0, got 0');
    expect(thrown(() => numberVar({ S: 'soon' }, 'S', { default: 2, above: 0 })).message).toBe('S: expected a number, got "soon"');
    expect(thrown(() => numberVar({ S: '11' }, 'S', { default: 2, above: 0, max: 10 })).message).toBe(
      'S: expected a number above 0 and at most 10, got 11',
    );
  });
});

describe('boolVar', () => {
  it('reads the usual spellings and refuses others', () => {
    expect(['1', 'TRUE', 'yes'].map((v) => boolVar({ B: v }, 'B', { default: false }))).toEqual([true, true, true]);
    expect(['0', 'False', 'NO'].map((v) => boolVar({ B: v }, 'B', { default: true }))).toEqual([false, false, false]);
    expect(boolVar({}, 'B', { default: true })).toBe(true);
    expect(thrown(() => boolVar({ B: 'maybe' }, 'B', { default: false })).message).toBe('B: expected true or false, got "maybe"');
  });
});

describe('URL readers', () => {
  const web = { schemes: ['https', 'http'] };
  it('strip trailing slashes unless asked to keep them', () => {
    expect(urlVar({ U: 'https://a.example/v1//' }, 'U', web)).toBe('https://a.example/v1');
    expect(urlVar({ U: 'https://a.example/v1/' }, 'U', { ...web, keepTrailingSlash: true })).toBe('https://a.example/v1/');
    expect(urlVar({}, 'U', web)).toBeUndefined();
  });
  it('use the default, or require the variable when there is none', () => {
    expect(requiredUrl({}, 'U', { ...web, default: 'http://127.0.0.1:1/' })).toBe('http://127.0.0.1:1');
    expect(thrown(() => requiredUrl({}, 'U', web)).message).toBe('U: is required (a URL with scheme https or http)');
  });
  it('refuse other schemes, queries when asked, and do not echo what does not parse', () => {
    expect(thrown(() => urlVar({ U: 'ftp://x' }, 'U', web)).message).toBe('U: must be a URL with scheme https or http, got "ftp:"');
    expect(urlVar({ U: 'https://x/?a=1' }, 'U', web)).toBe('https://x/?a=1');
    expect(thrown(() => urlVar({ U: 'https://x/?a=1' }, 'U', { ...web, allowQuery: false })).message).toBe(
      'U: must not carry a query or fragment',
    );
    const err = thrown(() => urlVar({ U: 'redis://:hunter2@[bad' }, 'U', { schemes: ['redis'] }));
    expect(err.message).toMatch(/^U: must be a URL with scheme redis/);
    expect(err.message).not.toContain('hunter2');
  });
});
