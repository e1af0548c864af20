import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spokenSamples, turnModelsDir, withSilence } from '../../../test/harness/turn-models.ts';
import { resolveTurnModels, type TurnModelPaths } from './models.ts';
import { startModelThread, threadedSileroVadSource, threadedSmartTurn } from './model-thread.ts';
import { loadSileroVadSource, SILERO_FRAME_SAMPLES } from './silero-vad.ts';
import { loadSmartTurn } from './smart-turn.ts';
import type { SpeechProbabilitySource, TurnCompletionModel } from './types.ts';

/**
 * The turn models in worker threads (TURN_MODEL_THREAD, issue 22): the same answers as on the main
 * thread, the main thread left free while they run, and a wrong file refused at load.
 */
let paths: TurnModelPaths;
let vadThread: SpeechProbabilitySource & { close(): Promise<void> };
let turnThread: TurnCompletionModel & { close(): Promise<void> };
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  paths = resolveTurnModels(turnModelsDir());
  vadThread = await threadedSileroVadSource(paths.sileroVad);
  turnThread = await threadedSmartTurn(paths.smartTurn);
  closers.push(
    () => vadThread.close(),
    () => turnThread.close(),
  );
});

afterAll(async () => {
  await Promise.all(closers.map((close) => close()));
});

async function probabilities(source: SpeechProbabilitySource, samples: Int16Array): Promise<number[]> {
  const stream = source.open();
  const frames = Array.from({ length: Math.floor(samples.length / SILERO_FRAME_SAMPLES) }, (_, k) =>
    samples.subarray(k * SILERO_FRAME_SAMPLES, (k + 1) * SILERO_FRAME_SAMPLES),
  );
  // All at once, as a listener may: the stream keeps them in order.
  return Promise.all(frames.map((frame) => stream.probability(frame)));
}

/** The main thread's busy time (event loop utilisation) while `work` runs. */
async function mainThreadBusyMs(work: () => Promise<unknown>): Promise<number> {
  const before = performance.eventLoopUtilization();
  await work();
  return performance.eventLoopUtilization(before).active;
}

describe('turn models in a worker thread', () => {
  it("Silero VAD gives the main thread's probabilities, frame for frame, on two streams at once", async () => {
    const inProcess = await loadSileroVadSource(paths.sileroVad);
    const a = withSilence(spokenSamples('I liked the onboarding a lot.'), 600);
    const b = withSilence(spokenSamples('Mostly the reports, and the price.'), 300);
    const [threadA, threadB] = await Promise.all([probabilities(vadThread, a), probabilities(vadThread, b)]);
    const [mainA, mainB] = [await probabilities(inProcess, a), await probabilities(inProcess, b)];
    expect(threadA.length).toBeGreaterThan(40);
    expect(threadA).toEqual(mainA);
    expect(threadB).toEqual(mainB);
    expect(Math.max(...threadA)).toBeGreaterThan(0.5);
  });

  it("Smart Turn gives the main thread's probability, and leaves the main thread free while it runs", async () => {
    const inProcess = await loadSmartTurn(paths.smartTurn);
    const turn = withSilence(spokenSamples('I liked the onboarding a lot.'), 200);
    const calls = 4;
    let threaded: number[] = [];
    let onMain: number[] = [];
    const threadedBusy = await mainThreadBusyMs(
      async () => (threaded = await Promise.all(Array.from({ length: calls }, () => turnThread.completion(turn)))),
    );
    const mainBusy = await mainThreadBusyMs(
      async () => (onMain = await Promise.all(Array.from({ length: calls }, () => inProcess.completion(turn)))),
    );
    expect(threaded).toEqual(onMain);
    expect(threaded[0]).toBeGreaterThan(0.8);
    // On the main thread the features and the inference hold the event loop (tens of ms a call, more
    // on a loaded machine); in the thread only the copy of the audio does. A ratio, so it holds at any load.
    expect(mainBusy).toBeGreaterThan(calls * 10);
    expect(threadedBusy).toBeLessThan(mainBusy / 5);
  });

  it("refuses a file that is not the model it was asked to run, at load, with the loader's message", async () => {
    await expect(startModelThread({ kind: 'turn', path: paths.sileroVad })).rejects.toThrow(/is not a Smart Turn v3 model/);
    await expect(startModelThread({ kind: 'vad', path: '/nonexistent/silero_vad.onnx' })).rejects.toThrow(/nonexistent/);
  });

  it('rejects calls once its thread is closed', async () => {
    const source = await threadedSileroVadSource(paths.sileroVad);
    const stream = source.open();
    expect(await stream.probability(new Int16Array(SILERO_FRAME_SAMPLES))).toBeLessThan(0.5);
    await source.close();
    await expect(stream.probability(new Int16Array(SILERO_FRAME_SAMPLES))).rejects.toThrow(/Silero VAD thread was closed/);
  });
});
