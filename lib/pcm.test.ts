import { describe, expect, it } from 'vitest';
import { parseWav, resamplePcm16, silencePcm, wavFromPcm16 } from './pcm.ts';

const ramp = (samples: number): Buffer => {
  const pcm = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) pcm.writeInt16LE(((i * 97) % 30000) - 15000, i * 2);
  return pcm;
};

describe('WAV', () => {
  it('round-trips PCM16 mono through the container', () => {
    const pcm = ramp(1600);
    const decoded = parseWav(wavFromPcm16(pcm, 16_000));
    expect(decoded).toMatchObject({ sampleRate: 16_000, channels: 1 });
    expect(decoded.pcm.equals(pcm)).toBe(true);
  });

  it('reads a streamed WAV whose data size is unknown (0xFFFFFFFF) to the last whole sample', () => {
    const wav = wavFromPcm16(ramp(10), 22_050);
    wav.writeUInt32LE(0xffffffff, 40);
    expect(parseWav(Buffer.concat([wav, Buffer.from([1])])).pcm.length).toBe(20);
  });

  it('refuses what is not a 16-bit PCM WAV', () => {
    expect(() => parseWav(Buffer.from('hello world, not a wav'))).toThrow('not a WAV file');
    const eightBit = wavFromPcm16(ramp(4), 8000);
    eightBit.writeUInt16LE(8, 34);
    expect(() => parseWav(eightBit)).toThrow('not 16-bit PCM');
  });
});

describe('resamplePcm16 and silencePcm', () => {
  it('changes the sample count by the rate ratio and keeps a constant signal constant', () => {
    const constant = Buffer.alloc(2400 * 2);
    for (let i = 0; i < 2400; i++) constant.writeInt16LE(1234, i * 2);
    const out = resamplePcm16(constant, 24_000, 16_000);
    expect(out.length).toBe(1600 * 2);
    for (let i = 0; i < 1600; i++) expect(out.readInt16LE(i * 2)).toBe(1234);
    expect(silencePcm(20, 16_000).length).toBe(640);
  });
});
