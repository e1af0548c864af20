import { beforeAll, describe, expect, it } from 'vitest';
import { noise, spokenSamples, turnModelsDir, withSilence } from '../../../test/harness/turn-models.ts';
import { resolveTurnModels } from './models.ts';
import { loadSileroVad, loadSileroVadSource, SILERO_FRAME_SAMPLES } from './silero-vad.ts';
import type { SpeechProbabilityModel } from './types.ts';

let vad: SpeechProbabilityModel;

beforeAll(async () => {
  vad = await loadSileroVad(resolveTurnModels(turnModelsDir()).sileroVad);
});

/** Each whole 32 ms frame's probability, from a fresh state. */
async function probabilities(samples: Int16Array): Promise<number[]> {
  vad.reset();
  const out: number[] = [];
  for (let at = 0; at + SILERO_FRAME_SAMPLES <= samples.length; at += SILERO_FRAME_SAMPLES)
    out.push(await vad.probability(samples.subarray(at, at + SILERO_FRAME_SAMPLES)));
  return out;
}

/** `silentFrames` frames of digital silence, then `samples`. */
function concat(silentFrames: number, samples: Int16Array): Int16Array {
  const out = new Int16Array(silentFrames * SILERO_FRAME_SAMPLES + samples.length);
  out.set(samples, silentFrames * SILERO_FRAME_SAMPLES);
  return out;
}

/** The longest run of consecutive frames at or above `threshold`. */
function longestRun(values: number[], threshold = 0.5): number {
  let best = 0,
    run = 0;
  for (const p of values) {
    run = p >= threshold ? run + 1 : 0;
    best = Math.max(best, run);
  }
  return best;
}

describe('Silero VAD (pipecat-ai 1.14.0 silero_vad.onnx)', () => {
  it('takes 512-sample frames', () => {
    expect(vad.frameSamples).toBe(512);
  });

  it('hears espeak-ng speech as speech and the silence after it as silence', async () => {
    const speech = spokenSamples('I liked the onboarding a lot.');
    const values = await probabilities(withSilence(speech, 600));
    const speechFrames = values.slice(0, Math.floor(speech.length / SILERO_FRAME_SAMPLES));
    const speechShare = speechFrames.filter((p) => p >= 0.5).length / speechFrames.length;
    expect(speechShare).toBeGreaterThan(0.8);
    expect(longestRun(values)).toBeGreaterThan(20); // one unbroken run of over 640 ms
    // 300 ms after the last word the model has let go.
    const tail = values.slice(Math.ceil((speech.length + 300 * 16) / SILERO_FRAME_SAMPLES));
    expect(tail.length).toBeGreaterThan(3);
    expect(Math.max(...tail)).toBeLessThan(0.1);
  });

  it('gives silence and low-level noise a low probability', async () => {
    expect(Math.max(...(await probabilities(new Int16Array(16_000))))).toBeLessThan(0.1);
    expect(Math.max(...(await probabilities(noise(2000, 0.003))))).toBeLessThan(0.25); // about -50 dBFS
    expect(Math.max(...(await probabilities(noise(2000, 0.03))))).toBeLessThan(0.25); // about -30 dBFS
  });

  it('does not make a speech run of a 150 ms noise burst or a click', async () => {
    for (const amplitude of [0.1, 0.5, 0.9]) {
      const burst = new Int16Array(16_000);
      burst.set(noise(150, amplitude, 5), 8000);
      expect(longestRun(await probabilities(burst), 0.5)).toBe(0);
    }
    const click = new Int16Array(16_000);
    click.fill(30_000, 8000, 8016).fill(-30_000, 8016, 8032);
    expect(longestRun(await probabilities(click), 0.5)).toBe(0);
  });

  it('reset forgets the recurrent state; frames sent at once are taken in order', async () => {
    const speech = withSilence(spokenSamples('Yes.'), 300);
    const first = await probabilities(speech);
    expect(await probabilities(speech)).toEqual(first);
    vad.reset();
    const frames = first.map((_, i) => speech.subarray(i * SILERO_FRAME_SAMPLES, (i + 1) * SILERO_FRAME_SAMPLES));
    expect(await Promise.all(frames.map((frame) => vad.probability(frame)))).toEqual(first);
  });

  it('clears its own state after about 2 s of clear non-speech', async () => {
    const speech = withSilence(spokenSamples('Yes.'), 100);
    // 80 silent frames: the state is cleared after the 63rd (2 s), so 17 silent frames remain before the speech.
    const long = await probabilities(concat(80, speech));
    const short = await probabilities(concat(17, speech));
    expect(long.slice(80)).toEqual(short.slice(17));
    // Without the clearing the two would differ: the same speech after only 16 silent frames does.
    expect((await probabilities(concat(16, speech))).slice(16)).not.toEqual(short.slice(17));
  });

  it('gives each stream opened on one loaded model its own state (several sessions in one bot process)', async () => {
    const source = await loadSileroVadSource(resolveTurnModels(turnModelsDir()).sileroVad);
    const a = withSilence(spokenSamples('I liked the onboarding a lot.'), 300);
    const b = concat(10, withSilence(spokenSamples('No.'), 300));
    const aloneA = await probabilities(a);
    const aloneB = await probabilities(b);
    // Two sessions' frames, interleaved frame by frame and in flight at once, as two listeners send them.
    const [streamA, streamB] = [source.open(), source.open()];
    const frame = (s: Int16Array, i: number) => s.subarray(i * SILERO_FRAME_SAMPLES, (i + 1) * SILERO_FRAME_SAMPLES);
    const gotA: Array<Promise<number>> = [];
    const gotB: Array<Promise<number>> = [];
    for (let i = 0; i < Math.max(aloneA.length, aloneB.length); i++) {
      if (i < aloneA.length) gotA.push(streamA.probability(frame(a, i)));
      if (i < aloneB.length) gotB.push(streamB.probability(frame(b, i)));
    }
    expect(await Promise.all(gotA)).toEqual(aloneA);
    expect(await Promise.all(gotB)).toEqual(aloneB);
    // The check can fail: one stream fed both answers' frames gives other numbers.
    const shared = source.open();
    const mixed: number[] = [];
    for (let i = 0; i < aloneB.length; i++) {
      if (i < aloneA.length) await shared.probability(frame(a, i));
      mixed.push(await shared.probability(frame(b, i)));
    }
    expect(mixed).not.toEqual(aloneB);
  });

  it('refuses a frame of the wrong size', async () => {
    await expect(vad.probability(new Int16Array(480))).rejects.toThrow('Silero VAD takes frames of 512 samples at 16 kHz, got 480');
  });

  it('refuses a file that is not Silero VAD', async () => {
    await expect(loadSileroVad(resolveTurnModels(turnModelsDir()).smartTurn)).rejects.toThrow(
      'is not a Silero VAD v5 model (inputs input_features; outputs logits)',
    );
  });
});
