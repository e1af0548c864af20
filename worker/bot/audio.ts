/** 16-bit little-endian mono PCM helpers for the bot: level measurement and framing (WAV is in lib/pcm.ts). */

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
