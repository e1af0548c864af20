import { describe, expect, it } from 'vitest';
import { resamplePcm16 } from './pcm.ts';
import { Pcm16StreamResampler } from './pcm-stream.ts';

/** A 440 Hz sine at 16 kHz, loud enough that a step at a chunk edge shows. */
function sine(samples: number, rate = 16_000): Buffer {
  const out = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) out.writeInt16LE(Math.round(12_000 * Math.sin((2 * Math.PI * 440 * i) / rate)), i * 2);
  return out;
}

function chunked(pcm: Buffer, sizes: number[], resample: (chunk: Buffer) => Buffer): Buffer {
  const parts: Buffer[] = [];
  let offset = 0;
  for (let k = 0; offset < pcm.length; k++) {
    const bytes = sizes[k % sizes.length]! * 2;
    parts.push(resample(pcm.subarray(offset, offset + bytes)));
    offset += bytes;
  }
  return Buffer.concat(parts);
}

const samples = (b: Buffer) => Array.from({ length: b.length / 2 }, (_, i) => b.readInt16LE(i * 2));

describe('Pcm16StreamResampler', () => {
  it('gives chunk by chunk the samples of the whole stream resampled at once (16 kHz -> 24 kHz, uneven chunks)', () => {
    const input = sine(16_000);
    const whole = samples(resamplePcm16(input, 16_000, 24_000));
    const resampler = new Pcm16StreamResampler(16_000, 24_000);
    const streamed = samples(chunked(input, [320, 161, 7, 512], (c) => resampler.push(c)));
    // The stream holds back at most the one output sample that needs the next chunk.
    expect(streamed.length).toBeGreaterThanOrEqual(whole.length - 1);
    expect(streamed.slice(0, whole.length - 2)).toEqual(whole.slice(0, whole.length - 2));
  });

  it('where resamplePcm16 run per chunk loses samples and steps at the edges', () => {
    const input = sine(16_000);
    const whole = samples(resamplePcm16(input, 16_000, 24_000));
    const naive = samples(chunked(input, [320, 161, 7, 512], (c) => resamplePcm16(c, 16_000, 24_000)));
    expect(naive.length).toBeLessThan(whole.length - 10);
  });

  it('starts afresh after reset, and passes equal rates through', () => {
    const resampler = new Pcm16StreamResampler(16_000, 24_000);
    resampler.push(sine(100));
    resampler.reset();
    const chunk = sine(320);
    expect(resampler.push(chunk)).toEqual(resamplePcm16(chunk, 16_000, 24_000).subarray(0, 479 * 2)); // the 480th needs the next chunk;
    expect(new Pcm16StreamResampler(24_000, 24_000).push(chunk)).toEqual(chunk);
    expect(() => new Pcm16StreamResampler(0, 24_000)).toThrow(/positive integers/);
  });
});
