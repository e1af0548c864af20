/**
 * Whisper's log-mel features, as Smart Turn v3 was trained on them (the formulas of transformers'
 * WhisperFeatureExtractor with an 8 s window): 16 kHz audio normalised to zero mean and unit
 * variance, reflect-padded by n_fft/2 at both ends, a periodic Hann window of 400 samples every 160,
 * the power of a true 400-point DFT (bins 0..200), 80 Slaney-normalised mel filters on the Slaney
 * mel scale, log10 with a 1e-10 floor, the last frame dropped, everything below (max - 8) raised to
 * it, then (x + 4) / 4. Output: [80 mel bins][800 frames], row-major, float32.
 * Everything that does not depend on the audio (window, filters, FFT twiddles) is computed once.
 */
export const WHISPER_SAMPLE_RATE = 16_000;
export const N_FFT = 400;
export const HOP = 160;
export const N_MELS = 80;
export const WINDOW_SECONDS = 8;
export const WINDOW_SAMPLES = WHISPER_SAMPLE_RATE * WINDOW_SECONDS;
export const N_FRAMES = WINDOW_SAMPLES / HOP;
const N_BINS = N_FFT / 2 + 1;
const MEL_FLOOR = 1e-10;
const VARIANCE_EPS = 1e-7;

/** A complex FFT of one fixed size whose factors are 2, 3, 4 or 5 (Stockham, self-sorting). */
export class MixedRadixFft {
  readonly size: number;
  private readonly stages: FftStage[] = [];
  private readonly scratchRe: Float64Array;
  private readonly scratchIm: Float64Array;

  constructor(size: number) {
    this.size = size;
    const radices: number[] = [];
    let rest = size;
    for (const p of [4, 2, 3, 5])
      while (rest % p === 0) {
        radices.push(p);
        rest /= p;
      }
    if (rest !== 1 || size < 2) throw new Error(`MixedRadixFft: ${size} is not a product of 2, 3 and 5`);
    let n = size;
    let stride = 1;
    for (const radix of radices) {
      const span = n / radix;
      // Twiddle for output t of group q: exp(-2πi·q·t/n), applied after the radix-p DFT (decimation in frequency).
      const twiddleRe = new Float64Array(span * radix);
      const twiddleIm = new Float64Array(span * radix);
      for (let q = 0; q < span; q++)
        for (let t = 0; t < radix; t++) {
          const angle = (-2 * Math.PI * q * t) / n;
          twiddleRe[q * radix + t] = Math.cos(angle);
          twiddleIm[q * radix + t] = Math.sin(angle);
        }
      // The radix-p DFT's own roots of unity, exp(-2πi·u/p).
      const rootRe = Float64Array.from({ length: radix }, (_, u) => Math.cos((-2 * Math.PI * u) / radix));
      const rootIm = Float64Array.from({ length: radix }, (_, u) => Math.sin((-2 * Math.PI * u) / radix));
      this.stages.push({ radix, span, stride, rootRe, rootIm, twiddleRe, twiddleIm });
      n = span;
      stride *= radix;
    }
    this.scratchRe = new Float64Array(size);
    this.scratchIm = new Float64Array(size);
  }

  /** In place: (re, im) becomes its DFT, sum_n x[n]·exp(-2πi·k·n/N). */
  transform(re: Float64Array, im: Float64Array): void {
    let inRe = re,
      inIm = im,
      outRe = this.scratchRe,
      outIm = this.scratchIm;
    for (const stage of this.stages) {
      if (stage.radix === 4) radix4(stage, inRe, inIm, outRe, outIm);
      else if (stage.radix === 5) radix5(stage, inRe, inIm, outRe, outIm);
      else radixAny(stage, inRe, inIm, outRe, outIm);
      [inRe, outRe] = [outRe, inRe];
      [inIm, outIm] = [outIm, inIm];
    }
    if (inRe !== re) {
      re.set(inRe);
      im.set(inIm);
    }
  }
}

interface FftStage {
  radix: number;
  span: number;
  stride: number;
  rootRe: Float64Array;
  rootIm: Float64Array;
  twiddleRe: Float64Array;
  twiddleIm: Float64Array;
}

// Output t of group q goes to r + stride·(radix·q + t), times its twiddle; inputs j come from r + stride·(q + span·j).
function store(s: FftStage, outRe: Float64Array, outIm: Float64Array, q: number, r: number, t: number, yr: number, yi: number): void {
  const w = q * s.radix + t;
  const wr = s.twiddleRe[w]!,
    wi = s.twiddleIm[w]!;
  const to = r + s.stride * (s.radix * q + t);
  outRe[to] = yr * wr - yi * wi;
  outIm[to] = yr * wi + yi * wr;
}

function radix4(s: FftStage, inRe: Float64Array, inIm: Float64Array, outRe: Float64Array, outIm: Float64Array): void {
  const { span, stride } = s;
  const step = stride * span;
  for (let q = 0; q < span; q++)
    for (let r = 0; r < stride; r++) {
      const i0 = r + stride * q,
        i1 = i0 + step,
        i2 = i1 + step,
        i3 = i2 + step;
      const ar = inRe[i0]! + inRe[i2]!,
        ai = inIm[i0]! + inIm[i2]!;
      const br = inRe[i0]! - inRe[i2]!,
        bi = inIm[i0]! - inIm[i2]!;
      const cr = inRe[i1]! + inRe[i3]!,
        ci = inIm[i1]! + inIm[i3]!;
      const dr = inRe[i1]! - inRe[i3]!,
        di = inIm[i1]! - inIm[i3]!;
      store(s, outRe, outIm, q, r, 0, ar + cr, ai + ci);
      store(s, outRe, outIm, q, r, 1, br + di, bi - dr);
      store(s, outRe, outIm, q, r, 2, ar - cr, ai - ci);
      store(s, outRe, outIm, q, r, 3, br - di, bi + dr);
    }
}

const C1 = Math.cos((2 * Math.PI) / 5),
  C2 = Math.cos((4 * Math.PI) / 5);
const S1 = Math.sin((2 * Math.PI) / 5),
  S2 = Math.sin((4 * Math.PI) / 5);

function radix5(s: FftStage, inRe: Float64Array, inIm: Float64Array, outRe: Float64Array, outIm: Float64Array): void {
  const { span, stride } = s;
  const step = stride * span;
  for (let q = 0; q < span; q++)
    for (let r = 0; r < stride; r++) {
      const i0 = r + stride * q,
        i1 = i0 + step,
        i2 = i1 + step,
        i3 = i2 + step,
        i4 = i3 + step;
      const t1r = inRe[i1]! + inRe[i4]!,
        t1i = inIm[i1]! + inIm[i4]!;
      const t2r = inRe[i2]! + inRe[i3]!,
        t2i = inIm[i2]! + inIm[i3]!;
      const t3r = inRe[i1]! - inRe[i4]!,
        t3i = inIm[i1]! - inIm[i4]!;
      const t4r = inRe[i2]! - inRe[i3]!,
        t4i = inIm[i2]! - inIm[i3]!;
      const a1r = inRe[i0]! + C1 * t1r + C2 * t2r,
        a1i = inIm[i0]! + C1 * t1i + C2 * t2i;
      const a2r = inRe[i0]! + C2 * t1r + C1 * t2r,
        a2i = inIm[i0]! + C2 * t1i + C1 * t2i;
      const b1r = S1 * t3r + S2 * t4r,
        b1i = S1 * t3i + S2 * t4i;
      const b2r = S2 * t3r - S1 * t4r,
        b2i = S2 * t3i - S1 * t4i;
      store(s, outRe, outIm, q, r, 0, inRe[i0]! + t1r + t2r, inIm[i0]! + t1i + t2i);
      store(s, outRe, outIm, q, r, 1, a1r + b1i, a1i - b1r);
      store(s, outRe, outIm, q, r, 2, a2r + b2i, a2i - b2r);
      store(s, outRe, outIm, q, r, 3, a2r - b2i, a2i + b2r);
      store(s, outRe, outIm, q, r, 4, a1r - b1i, a1i + b1r);
    }
}

/** Any small radix, as a direct DFT of its p inputs (used for 2 and 3). */
function radixAny(s: FftStage, inRe: Float64Array, inIm: Float64Array, outRe: Float64Array, outIm: Float64Array): void {
  const { radix, span, stride, rootRe, rootIm } = s;
  for (let q = 0; q < span; q++)
    for (let r = 0; r < stride; r++)
      for (let t = 0; t < radix; t++) {
        let yr = 0,
          yi = 0;
        for (let j = 0; j < radix; j++) {
          const u = (j * t) % radix;
          const at = r + stride * (q + span * j);
          yr += inRe[at]! * rootRe[u]! - inIm[at]! * rootIm[u]!;
          yi += inRe[at]! * rootIm[u]! + inIm[at]! * rootRe[u]!;
        }
        store(s, outRe, outIm, q, r, t, yr, yi);
      }
}

function hzToMel(hz: number): number {
  // Slaney: linear below 1 kHz (3 mels per 200 Hz), logarithmic above (27 mels per factor 6.4).
  return hz < 1000 ? (3 * hz) / 200 : 15 + (Math.log(hz / 1000) * 27) / Math.log(6.4);
}

function melToHz(mel: number): number {
  return mel < 15 ? (200 * mel) / 3 : 1000 * Math.exp(((mel - 15) * Math.log(6.4)) / 27);
}

/** Each filter as its first non-zero bin and weights (Slaney area normalisation included). */
export function melFilters(): Array<{ start: number; weights: Float64Array }> {
  const melMax = hzToMel(WHISPER_SAMPLE_RATE / 2);
  const edges = Array.from({ length: N_MELS + 2 }, (_, i) => melToHz((melMax * i) / (N_MELS + 1)));
  const binHz = (k: number) => (k * (WHISPER_SAMPLE_RATE / 2)) / (N_BINS - 1);
  return Array.from({ length: N_MELS }, (_, m) => {
    const [lo, mid, hi] = [edges[m]!, edges[m + 1]!, edges[m + 2]!];
    const norm = 2 / (hi - lo);
    const row = Array.from(
      { length: N_BINS },
      (_, k) => Math.max(0, Math.min((binHz(k) - lo) / (mid - lo), (hi - binHz(k)) / (hi - mid))) * norm,
    );
    const start = row.findIndex((w) => w > 0);
    const end = row.findLastIndex((w) => w > 0) + 1;
    return start < 0 ? { start: 0, weights: new Float64Array(0) } : { start, weights: Float64Array.from(row.slice(start, end)) };
  });
}

const HANN = Float64Array.from({ length: N_FFT }, (_, n) => 0.5 - 0.5 * Math.cos((2 * Math.PI * n) / N_FFT));
const FILTERS = melFilters();
const FFT = new MixedRadixFft(N_FFT);

/** The last 8 s of `pcm` (16 kHz PCM16), left-padded with silence, normalised to zero mean and unit variance. */
function normalisedWindow(pcm: Int16Array): Float64Array {
  const x = new Float64Array(WINDOW_SAMPLES);
  const take = Math.min(pcm.length, WINDOW_SAMPLES);
  for (let i = 0; i < take; i++) x[WINDOW_SAMPLES - take + i] = pcm[pcm.length - take + i]! / 32768;
  let mean = 0;
  for (let i = 0; i < x.length; i++) mean += x[i]!;
  mean /= x.length;
  let variance = 0;
  for (let i = 0; i < x.length; i++) variance += (x[i]! - mean) ** 2;
  const scale = 1 / Math.sqrt(variance / x.length + VARIANCE_EPS);
  for (let i = 0; i < x.length; i++) x[i] = (x[i]! - mean) * scale;
  return x;
}

/** Sample `i` of the signal reflect-padded by n_fft/2 on both sides (numpy's "reflect": the edge is not repeated). */
function reflected(x: Float64Array, i: number): number {
  const j = i - N_FFT / 2;
  if (j < 0) return x[-j]!;
  if (j >= x.length) return x[2 * (x.length - 1) - j]!;
  return x[j]!;
}

/** Smart Turn's input: the log-mel features of the last 8 s of `pcm`, [80][800] row-major. */
export function whisperLogMel(pcm: Int16Array): Float32Array {
  const x = normalisedWindow(pcm);
  const mel = new Float64Array(N_MELS * N_FRAMES);
  const re = new Float64Array(N_FFT);
  const im = new Float64Array(N_FFT);
  const powerA = new Float64Array(N_BINS);
  const powerB = new Float64Array(N_BINS);
  // Two real frames per complex FFT: frame a in the real part, frame b in the imaginary part.
  for (let frame = 0; frame < N_FRAMES; frame += 2) {
    const a = frame * HOP,
      b = (frame + 1) * HOP;
    for (let n = 0; n < N_FFT; n++) {
      re[n] = reflected(x, a + n) * HANN[n]!;
      im[n] = reflected(x, b + n) * HANN[n]!;
    }
    FFT.transform(re, im);
    for (let k = 0; k < N_BINS; k++) {
      const mirror = (N_FFT - k) % N_FFT;
      const zr = re[k]!,
        zi = im[k]!,
        wr = re[mirror]!,
        wi = im[mirror]!;
      powerA[k] = ((zr + wr) ** 2 + (zi - wi) ** 2) / 4;
      powerB[k] = ((zi + wi) ** 2 + (zr - wr) ** 2) / 4;
    }
    for (let m = 0; m < N_MELS; m++) {
      const { start, weights } = FILTERS[m]!;
      let sumA = 0,
        sumB = 0;
      for (let k = 0; k < weights.length; k++) {
        sumA += weights[k]! * powerA[start + k]!;
        sumB += weights[k]! * powerB[start + k]!;
      }
      mel[m * N_FRAMES + frame] = Math.log10(Math.max(MEL_FLOOR, sumA));
      mel[m * N_FRAMES + frame + 1] = Math.log10(Math.max(MEL_FLOOR, sumB));
    }
  }
  let max = -Infinity;
  for (let i = 0; i < mel.length; i++) if (mel[i]! > max) max = mel[i]!;
  const out = new Float32Array(mel.length);
  for (let i = 0; i < mel.length; i++) out[i] = (Math.max(mel[i]!, max - 8) + 4) / 4;
  return out;
}
