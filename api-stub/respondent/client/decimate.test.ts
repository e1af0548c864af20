import { describe, expect, it } from 'vitest';
import { Decimator, toInt16 } from './decimate.ts';

const sine = (hz: number, rate: number, seconds: number): Float32Array =>
  Float32Array.from({ length: Math.round(rate * seconds) }, (_, i) => 0.5 * Math.sin((2 * Math.PI * hz * i) / rate));
const rms = (xs: number[]): number => Math.sqrt(xs.reduce((a, x) => a + x * x, 0) / xs.length);

function run(rate: number, input: Float32Array, block = 128): number[] {
  const out: number[] = [];
  const d = new Decimator(rate);
  for (let i = 0; i < input.length; i += block) d.push(input.subarray(i, i + block), (s) => out.push(s));
  return out;
}

describe('Decimator (microphone to 16 kHz)', () => {
  it.each([48_000, 44_100, 16_000, 8_000])('turns one second at %i Hz into 16 000 samples, fed in 128-sample blocks', (rate) => {
    expect(Math.abs(run(rate, sine(440, rate, 1)).length - 16_000)).toBeLessThanOrEqual(1);
  });

  it('keeps a speech-band tone at its level', () => {
    const out = run(48_000, sine(440, 48_000, 1));
    expect(rms(out) / 0x7fff).toBeCloseTo(0.5 / Math.SQRT2, 1);
  });

  it('attenuates a tone above the 8 kHz Nyquist limit instead of folding it back at full level', () => {
    const passed = rms(run(48_000, sine(440, 48_000, 1)));
    const folded = rms(run(48_000, sine(15_000, 48_000, 1)));
    expect(folded).toBeLessThan(passed * 0.3);
  });

  it('clamps and scales to signed 16-bit', () => {
    expect([toInt16(2), toInt16(-2), toInt16(0), toInt16(1), toInt16(-1)]).toEqual([32767, -32768, 0, 32767, -32768]);
  });

  it('refuses a rate that is not positive', () => {
    expect(() => new Decimator(0)).toThrow(RangeError);
  });
});
