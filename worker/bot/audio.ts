/** 16-bit little-endian mono PCM helpers: WAV wrapping and level measurement. */

export function wavFromPcm16(pcm: Buffer, sampleRate: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + pcm.length, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16); // PCM fmt chunk size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([header, pcm]);
}

/** Root-mean-square level of PCM16 samples in dBFS (-Infinity for silence). */
export function levelDbfs(pcm: Buffer, offset = 0, length = pcm.length - offset): number {
  const samples = Math.floor(length / 2);
  if (samples === 0) return -Infinity;
  let sum = 0;
  for (let i = 0; i < samples; i++) {
    const s = pcm.readInt16LE(offset + i * 2) / 32768;
    sum += s * s;
  }
  const rms = Math.sqrt(sum / samples);
  return rms === 0 ? -Infinity : 20 * Math.log10(rms);
}

/** Splits PCM into frames of `frameBytes` (the last one may be shorter). */
export function* frames(pcm: Buffer, frameBytes: number): Generator<Buffer> {
  for (let i = 0; i < pcm.length; i += frameBytes) yield pcm.subarray(i, Math.min(i + frameBytes, pcm.length));
}
