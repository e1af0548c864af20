import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { noise, numpyPython, spokenSamples, turnModelsDir } from '../../../test/harness/turn-models.ts';
import { melFilters, MixedRadixFft, N_FRAMES, N_MELS, whisperLogMel, WINDOW_SAMPLES } from './whisper-features.ts';

function naiveDft(re: Float64Array, im: Float64Array): [Float64Array, Float64Array] {
  const n = re.length;
  const outRe = new Float64Array(n),
    outIm = new Float64Array(n);
  for (let k = 0; k < n; k++)
    for (let j = 0; j < n; j++) {
      const angle = (-2 * Math.PI * k * j) / n;
      outRe[k]! += re[j]! * Math.cos(angle) - im[j]! * Math.sin(angle);
      outIm[k]! += re[j]! * Math.sin(angle) + im[j]! * Math.cos(angle);
    }
  return [outRe, outIm];
}

/** pipecat's own numpy extractor (shipped in the same wheel, kept in the cache as reference/) on the same samples. */
function referenceLogMel(samples: Int16Array): Float32Array {
  const dir = mkdtempSync(join(tmpdir(), 'logmel-'));
  writeFileSync(join(dir, 'in.pcm'), samples);
  const program = `
import importlib.util, sys
import numpy as np
spec = importlib.util.spec_from_file_location("wf", sys.argv[1]); wf = importlib.util.module_from_spec(spec); spec.loader.exec_module(wf)
audio = np.fromfile(sys.argv[2], dtype=np.int16).astype(np.float32) / 32768.0
n = 128000
audio = audio[-n:] if audio.size > n else np.pad(audio, (n - audio.size, 0))  # the last 8 s, left-padded
wf.compute_whisper_log_mel_features(audio, do_normalize=True).astype(np.float32).tofile(sys.argv[3])
`;
  execFileSync(numpyPython(), [
    '-c',
    program,
    join(turnModelsDir(), 'reference', 'whisper_features.py'),
    join(dir, 'in.pcm'),
    join(dir, 'out.f32'),
  ]);
  const bytes = readFileSync(join(dir, 'out.f32'));
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
}

function maxDifference(a: Float32Array, b: Float32Array): number {
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i]! - b[i]!));
  return max;
}

describe('Whisper log-mel features', () => {
  it('the FFT is a true DFT of sizes made of 2, 3, 4 and 5 (400 included, no zero-padding to 512)', () => {
    for (const size of [400, 200, 30, 12, 8, 5]) {
      const re = Float64Array.from({ length: size }, (_, i) => Math.sin(i * 1.7) + (i % 7) / 7);
      const im = Float64Array.from({ length: size }, (_, i) => Math.cos(i * 0.3) - (i % 3) / 3);
      const [wantRe, wantIm] = naiveDft(re, im);
      new MixedRadixFft(size).transform(re, im);
      for (let k = 0; k < size; k++) {
        expect(re[k]).toBeCloseTo(wantRe[k]!, 9);
        expect(im[k]).toBeCloseTo(wantIm[k]!, 9);
      }
    }
    expect(() => new MixedRadixFft(14)).toThrow('14 is not a product of 2, 3 and 5');
  });

  it("matches the model vendor's numpy extractor on speech, on more than 8 s, on noise and on silence", () => {
    const speech = spokenSamples('I liked the onboarding a lot.');
    const long = new Int16Array(WINDOW_SAMPLES + 40_000);
    long.set(noise(2500, 0.3, 7));
    long.set(speech, long.length - speech.length);
    for (const samples of [speech, long, noise(3000, 0.01, 3), new Int16Array(800), new Int16Array(0)]) {
      const ours = whisperLogMel(samples);
      expect(ours.length).toBe(N_MELS * N_FRAMES);
      expect(maxDifference(ours, referenceLogMel(samples))).toBeLessThan(1e-4);
    }
  }, 180_000);

  it('puts a pure tone in the mel band around its frequency', () => {
    const tone = Int16Array.from({ length: 16_000 }, (_, i) => Math.round(10_000 * Math.sin((2 * Math.PI * 1000 * i) / 16_000)));
    const features = whisperLogMel(tone);
    const lastFrame = N_FRAMES - 10; // inside the tone (it ends the window)
    let loudest = 0;
    for (let m = 1; m < N_MELS; m++) if (features[m * N_FRAMES + lastFrame]! > features[loudest * N_FRAMES + lastFrame]!) loudest = m;
    const filter = melFilters()[loudest]!;
    // Bin k is k·40 Hz: 1 kHz is bin 25, inside the loudest filter.
    expect(filter.start).toBeLessThanOrEqual(25);
    expect(filter.start + filter.weights.length).toBeGreaterThan(25);
    // Silence before the tone sits at the floor, 8 (log10) below the loudest value: (max - 8 + 4) / 4.
    const max = Math.max(...features);
    expect(features[5 * N_FRAMES + 10]).toBeCloseTo((max * 4 - 4 - 8 + 4) / 4, 5);
  });
});
