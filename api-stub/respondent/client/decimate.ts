/**
 * Turns microphone samples at the audio context's rate into 16-bit samples at 16 kHz. Each output
 * sample is the mean of the input samples in its window ("integrate and dump"): a crude low-pass
 * that keeps speech intelligible and stops most aliasing, at no cost. Input rates below 16 kHz
 * repeat samples. Pure and stateful across calls, so the AudioWorklet can feed it 128-sample blocks.
 */
export const TARGET_RATE = 16_000;

export class Decimator {
  private readonly step: number;
  private position = 0;
  private sum = 0;
  private count = 0;

  constructor(inputRate: number) {
    if (!(inputRate > 0)) throw new RangeError(`input rate must be positive, got ${inputRate}`);
    this.step = inputRate / TARGET_RATE;
  }

  /** Consumes input samples (floats in [-1, 1]) and calls `emit` with each 16-bit output sample. */
  push(input: ArrayLike<number>, emit: (sample: number) => void): void {
    for (let i = 0; i < input.length; i++) {
      this.sum += input[i] ?? 0;
      this.count += 1;
      this.position += 1;
      while (this.position >= this.step) {
        this.position -= this.step;
        emit(toInt16(this.count > 0 ? this.sum / this.count : 0));
        if (this.position < this.step) {
          this.sum = 0;
          this.count = 0;
        }
      }
    }
  }
}

export function toInt16(value: number): number {
  const clamped = Math.max(-1, Math.min(1, value));
  return Math.round(clamped < 0 ? clamped * 0x8000 : clamped * 0x7fff);
}
