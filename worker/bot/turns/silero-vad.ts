import { Tensor, type InferenceSession } from 'onnxruntime-node';
import { openModelSession } from './onnx-session.ts';
import { LISTEN_SAMPLE_RATE, type SpeechProbabilityModel, type SpeechProbabilitySource } from './types.ts';

/**
 * Silero VAD v5 (the file pipecat-ai ships) on 16 kHz frames of 512 samples (32 ms). The graph's
 * inputs are `input` [1, 64 + 512] (the last 64 samples of the previous frame, then this frame, as
 * floats in -1..1), `state` [2, 1, 128] (its recurrent state) and `sr` (int64 scalar); it returns
 * `output` [1, 1] (the speech probability) and `stateN` (the next state).
 */
export const SILERO_FRAME_SAMPLES = 512;
const CONTEXT_SAMPLES = 64;
const STATE_SHAPE = [2, 1, 128];
const INPUTS = ['input', 'state', 'sr'];

/**
 * Long non-speech (music, steady noise, minutes of silence) can leave the recurrent state slow to
 * notice the speech that follows, so the state is cleared every ~2 s of audio, but only while the
 * last frames were clearly not speech (a reset mid-word would drop the probability for a moment).
 */
const RESET_EVERY_FRAMES = Math.round((2 * LISTEN_SAMPLE_RATE) / SILERO_FRAME_SAMPLES);
const QUIET_PROBABILITY = 0.1;
const QUIET_FRAMES_BEFORE_RESET = 5;

/** One step of the model: this frame (after the previous frame's last 64 samples) and the state in; the probability and the next state out. */
export type SileroStep = (input: Float32Array, state: Float32Array) => Promise<{ probability: number; state: Float32Array }>;

/** Checks that the session is Silero VAD v5 and returns its step (ONNX Runtime's `run` may be called from several streams at once). */
export function sileroStepOn(session: InferenceSession, path: string): SileroStep {
  const missing = INPUTS.filter((name) => !session.inputNames.includes(name));
  if (missing.length || !session.outputNames.includes('output') || !session.outputNames.includes('stateN')) {
    throw new Error(
      `${path} is not a Silero VAD v5 model (inputs ${session.inputNames.join(', ')}; outputs ${session.outputNames.join(', ')})`,
    );
  }
  const sampleRate = new Tensor('int64', BigInt64Array.from([BigInt(LISTEN_SAMPLE_RATE)]), []);
  return async (input, state) => {
    const result = await session.run({
      input: new Tensor('float32', input, [1, input.length]),
      state: new Tensor('float32', state, STATE_SHAPE),
      sr: sampleRate,
    });
    return { probability: Number((result.output!.data as Float32Array)[0]), state: Float32Array.from(result.stateN!.data as Float32Array) };
  };
}

/** Streams on one step function: in this thread's session, or in the turn models' thread (model-thread.ts). */
export function sileroSource(step: SileroStep): SpeechProbabilitySource {
  return { frameSamples: SILERO_FRAME_SAMPLES, open: () => openStream(step) };
}

/** The model loaded once in this thread; each `open()` is one stream of frames with its own state. */
export async function loadSileroVadSource(path: string): Promise<SpeechProbabilitySource> {
  return sileroSource(sileroStepOn(await openModelSession(path), path));
}

/** One stream on a freshly loaded model (tests and benches). */
export async function loadSileroVad(path: string): Promise<SpeechProbabilityModel> {
  return (await loadSileroVadSource(path)).open();
}

function openStream(step: SileroStep): SpeechProbabilityModel {
  const input = new Float32Array(CONTEXT_SAMPLES + SILERO_FRAME_SAMPLES);
  let state: Float32Array = new Float32Array(2 * 128);
  let framesSinceReset = 0;
  let quietFrames = 0;
  let queue: Promise<unknown> = Promise.resolve();

  const reset = (): void => {
    state = new Float32Array(2 * 128);
    input.fill(0, 0, CONTEXT_SAMPLES);
    framesSinceReset = 0;
    quietFrames = 0;
  };

  const infer = async (frame: Int16Array): Promise<number> => {
    for (let i = 0; i < SILERO_FRAME_SAMPLES; i++) input[CONTEXT_SAMPLES + i] = frame[i]! / 32768;
    const result = await step(input, state);
    const probability = result.probability;
    state = result.state;
    input.copyWithin(0, SILERO_FRAME_SAMPLES);
    framesSinceReset++;
    quietFrames = probability < QUIET_PROBABILITY ? quietFrames + 1 : 0;
    if (framesSinceReset >= RESET_EVERY_FRAMES && quietFrames >= QUIET_FRAMES_BEFORE_RESET) reset();
    return probability;
  };

  return {
    frameSamples: SILERO_FRAME_SAMPLES,
    probability(frame: Int16Array): Promise<number> {
      if (frame.length !== SILERO_FRAME_SAMPLES) {
        return Promise.reject(new Error(`Silero VAD takes frames of ${SILERO_FRAME_SAMPLES} samples at 16 kHz, got ${frame.length}`));
      }
      // Frames must reach the model in order, one at a time: each one's state feeds the next.
      const copy = Int16Array.from(frame);
      const next = queue.then(() => infer(copy));
      queue = next.catch(() => undefined);
      return next;
    },
    reset,
  };
}
