import { describe, expect, it } from 'vitest';
import { describeUnsafeNumber, findUnsafeNumber, numberProblem } from './json-numbers.ts';

describe('numbers JSON cannot carry through JavaScript unchanged', () => {
  it('refuses overflow, underflow and integers that come back with other digits', () => {
    expect(numberProblem('1e309')).toBe('overflow');
    expect(numberProblem('-1e309')).toBe('overflow');
    expect(numberProblem('1e-400')).toBe('underflow');
    expect(numberProblem('18446744073709551617')).toBe('unsafe_integer');
    expect(numberProblem('18446744073709551616')).toBe('unsafe_integer');
    expect(numberProblem('-9007199254740993')).toBe('unsafe_integer');
  });

  it('keeps every number that comes back as written', () => {
    for (const ok of [
      '0',
      '-0',
      '0.0',
      '1',
      '-12',
      '9007199254740991',
      '-9007199254740991',
      '0.1',
      '1.5e300',
      '1e-300',
      '123456789012345680000',
      '1000000000000000000000',
      '2.5E-3',
      '0e5',
    ]) {
      expect(numberProblem(ok), ok).toBeNull();
      // The oracle: JavaScript's own round trip gives the same number.
      expect(Number(JSON.stringify(JSON.parse(ok))) === Number(ok), ok).toBe(true);
    }
  });

  it('names the path of the first unsafe number, inside strings, objects and arrays', () => {
    expect(findUnsafeNumber('{"a":"1e309","b":[1,2,{"c":1e309}]}')).toEqual({ path: 'b.2.c', text: '1e309', reason: 'overflow' });
    expect(findUnsafeNumber('{"k\\"ey":{"x":[0, 18446744073709551617]}}')).toEqual({
      path: 'k"ey.x.1',
      text: '18446744073709551617',
      reason: 'unsafe_integer',
    });
    expect(findUnsafeNumber('1e999')).toEqual({ path: '', text: '1e999', reason: 'overflow' });
    expect(findUnsafeNumber('{"a":{"b":1},"c":2,"d":[[],[1e-999]]}')).toEqual({ path: 'd.1.0', text: '1e-999', reason: 'underflow' });
    expect(findUnsafeNumber('{"a":1.5,"b":[true,false,null,-3]}')).toBeNull();
  });

  it('scans any depth the body limit allows without recursion', () => {
    const deep = `${'['.repeat(40_000)}1e400${']'.repeat(40_000)}`;
    expect(findUnsafeNumber(deep)?.reason).toBe('overflow');
  });

  it('says which path and what to do', () => {
    expect(describeUnsafeNumber({ path: 'metadata.n', text: '1e309', reason: 'overflow' })).toBe(
      'metadata.n: the number 1e309 is too large for a JSON number in JavaScript (it would come back as null); send it as a string.',
    );
  });
});
