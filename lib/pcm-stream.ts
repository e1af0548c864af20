/**
 * Resampling of a PCM16 mono stream that arrives in chunks (20 ms room frames).
 *
 * lib/pcm.ts's resamplePcm16 is for whole buffers: run chunk by chunk it restarts its position at
 * every chunk, so it drops the fractional output sample of chunks whose length does not divide
 * evenly, and it holds a chunk's last sample instead of interpolating towards the next chunk's
 * first (a small step at every edge, 50 times a second: audible as a buzz, and a model hears it).
 * This one keeps a carry, so chunk by chunk gives the same samples as the whole stream at once.
 */
function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

export class Pcm16StreamResampler {
  /** Input samples per output step and output steps per input sample, reduced (16k->24k: 2 and 3). */
  private readonly step: number;
  private readonly scale: number;
  /**
   * Position of the next output sample, in 1/scale input samples from the current chunk's start; -scale..0 means
   * between the carried sample and the chunk's first.
   */
  private position = 0;
  /** The previous chunk's last sample, for interpolating across the edge. */
  private carry: number | null = null;

  constructor(from: number, to: number) {
    if (!(Number.isInteger(from) && Number.isInteger(to) && from > 0 && to > 0))
      throw new Error(`sample rates must be positive integers, got ${from} and ${to}`);
    const d = gcd(from, to);
    this.step = from / d;
    this.scale = to / d;
  }

  /** The resampled samples of the next chunk (an odd trailing byte is ignored, as PCM16 has none). */
  push(chunk: Buffer): Buffer {
    const n = chunk.length >> 1;
    if (n === 0) return Buffer.alloc(0);
    if (this.step === this.scale) return chunk.subarray(0, n * 2);
    const input = (i: number) => (i < 0 ? (this.carry ?? chunk.readInt16LE(0)) : chunk.readInt16LE(i * 2));
    // Outputs at positions up to the chunk's last sample; later ones need the next chunk.
    const last = (n - 1) * this.scale;
    const count = this.position > last ? 0 : Math.floor((last - this.position) / this.step) + 1;
    const out = Buffer.alloc(count * 2);
    let p = this.position;
    for (let k = 0; k < count; k++, p += this.step) {
      const j = Math.floor(p / this.scale);
      const frac = (p - j * this.scale) / this.scale;
      const a = input(j);
      const value = frac === 0 ? a : a + (input(j + 1) - a) * frac;
      out.writeInt16LE(Math.round(value), k * 2);
    }
    this.position = p - n * this.scale;
    this.carry = chunk.readInt16LE((n - 1) * 2);
    return out;
  }

  /** Forgets the carry: the next chunk does not continue the previous one (audio was dropped). */
  reset(): void {
    this.position = 0;
    this.carry = null;
  }
}
