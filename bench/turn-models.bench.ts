import { noise, spokenSamples, turnModelsDir, withSilence } from '../test/harness/turn-models.ts';
import { resolveTurnModels } from '../worker/bot/turns/models.ts';
import { loadSileroVad, SILERO_FRAME_SAMPLES } from '../worker/bot/turns/silero-vad.ts';
import { loadSmartTurn } from '../worker/bot/turns/smart-turn.ts';
import { N_FFT, N_FRAMES, whisperLogMel, WINDOW_SAMPLES } from '../worker/bot/turns/whisper-features.ts';
import { fmt, machineLine, median, percentile, printTable } from './support.ts';

/**
 * What the two turn models cost in one bot process, on this machine: memory added by loading both,
 * time and CPU per Silero frame (32 ms of audio) and per Smart Turn call on a full 8 s window (its
 * feature extraction apart), the CPU share of one live session, and the feature extractor's FFT
 * against the plain 201-bin DFT it replaces. Single-threaded sessions, as in the bot.
 */
const SILERO_FRAMES = Number(process.env.BENCH_SILERO_FRAMES ?? 2000);
const SMART_TURN_CALLS = Number(process.env.BENCH_SMART_TURN_CALLS ?? 30);
const mib = (bytes: number): string => `${fmt(bytes / 2 ** 20, 1)} MiB`;
const msOf = (x: number, digits = 2): string => `${fmt(x, digits)} ms`;

function settle(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().rss;
}

console.log(machineLine());
const paths = resolveTurnModels(turnModelsDir());
const speech = withSilence(spokenSamples('I liked the onboarding a lot, mostly the people and the pace of it.'), 500);
// Warm the feature extractor's JIT before measuring memory, so the models' share is what is left.
whisperLogMel(speech);
const rssBefore = settle();
const vad = await loadSileroVad(paths.sileroVad);
const turn = await loadSmartTurn(paths.smartTurn);
await vad.probability(speech.subarray(0, SILERO_FRAME_SAMPLES));
await turn.completion(speech);
const rssAfter = settle();

const frameMs: number[] = [];
const frames = Math.floor(speech.length / SILERO_FRAME_SAMPLES);
const vadCpu = process.cpuUsage();
for (let i = 0; i < SILERO_FRAMES; i++) {
  const at = (i % frames) * SILERO_FRAME_SAMPLES;
  const t0 = performance.now();
  await vad.probability(speech.subarray(at, at + SILERO_FRAME_SAMPLES));
  frameMs.push(performance.now() - t0);
}
const vadUsage = process.cpuUsage(vadCpu);
const vadCpuMs = (vadUsage.user + vadUsage.system) / 1000 / SILERO_FRAMES;

const window = new Int16Array(WINDOW_SAMPLES);
window.set(noise(2000, 0.05, 3));
window.set(speech, WINDOW_SAMPLES - speech.length);
const featureMs: number[] = [];
for (let i = 0; i < SMART_TURN_CALLS; i++) {
  const t0 = performance.now();
  whisperLogMel(window);
  featureMs.push(performance.now() - t0);
}
const callMs: number[] = [];
const turnCpu = process.cpuUsage();
for (let i = 0; i < SMART_TURN_CALLS; i++) {
  const t0 = performance.now();
  await turn.completion(window);
  callMs.push(performance.now() - t0);
}
const cpu = process.cpuUsage(turnCpu);
const turnCpuMs = (cpu.user + cpu.system) / 1000 / SMART_TURN_CALLS;

// The plain alternative to the FFT: a precomputed 201 x 400 DFT matrix applied to every frame.
const bins = N_FFT / 2 + 1;
const cos = Float64Array.from({ length: bins * N_FFT }, (_, i) => Math.cos((2 * Math.PI * Math.floor(i / N_FFT) * (i % N_FFT)) / N_FFT));
const sin = Float64Array.from({ length: bins * N_FFT }, (_, i) => Math.sin((2 * Math.PI * Math.floor(i / N_FFT) * (i % N_FFT)) / N_FFT));
const frame = Float64Array.from({ length: N_FFT }, (_, i) => Math.sin(i));
const power = new Float64Array(bins);
const dftRuns: number[] = [];
for (let run = 0; run < 3; run++) {
  const t0 = performance.now();
  for (let f = 0; f < N_FRAMES; f++)
    for (let k = 0; k < bins; k++) {
      let re = 0,
        im = 0;
      for (let n = 0; n < N_FFT; n++) {
        re += frame[n]! * cos[k * N_FFT + n]!;
        im -= frame[n]! * sin[k * N_FFT + n]!;
      }
      power[k] = re * re + im * im;
    }
  dftRuns.push(performance.now() - t0);
}

// A live session runs Silero on every 32 ms frame; Smart Turn once per pause that reaches
// TURN_MODEL_SILENCE_MS (say 10 per minute of answering: generous).
const sessionCore = (vadCpuMs * (1000 / 32)) / 1000 + (turnCpuMs * 10) / 60_000;
printTable(
  ['turn models, one bot process', 'value'],
  [
    ['RSS added by loading both models (after one call each)', mib(rssAfter - rssBefore)],
    [
      `Silero VAD: wall per 32 ms frame, p50 / p99 (${SILERO_FRAMES} frames)`,
      `${msOf(median(frameMs), 3)} / ${msOf(percentile(frameMs, 99), 3)}`,
    ],
    ['Silero VAD: CPU per frame', msOf(vadCpuMs, 3)],
    [
      `Smart Turn: wall per call on 8 s, p50 / p90 (${SMART_TURN_CALLS} calls)`,
      `${msOf(median(callMs), 1)} / ${msOf(percentile(callMs, 90), 1)}`,
    ],
    ['  of which Whisper log-mel features (measured apart), p50', msOf(median(featureMs), 1)],
    ['Smart Turn: CPU per call (features included)', msOf(turnCpuMs, 1)],
    ['one session: VAD on every frame + 10 Smart Turn calls a minute', `${fmt(sessionCore * 100, 2)} % of one core`],
    ['features with a 201-bin DFT matrix instead of the FFT (spectra only), p50', msOf(median(dftRuns), 0)],
  ],
);
