import { Tensor, type InferenceSession } from 'onnxruntime-node';
import { openModelSession } from './onnx-session.ts';
import type { TurnCompletionModel } from './types.ts';
import { N_FRAMES, N_MELS, whisperLogMel } from './whisper-features.ts';

/**
 * Smart Turn v3 (pipecat-ai's end-of-turn model): the last 8 s of the turn as Whisper log-mel
 * features in, the probability that the speaker has finished out. It hears only prosody, not words.
 * Calls are queued: one inference at a time per bot, as the model runs on one thread anyway.
 */
const INPUT = 'input_features';

/** Checks that the session is Smart Turn v3 and returns its inference: features, then the model (in whichever thread holds the session). */
export function smartTurnOn(session: InferenceSession, path: string): (pcm: Int16Array) => Promise<number> {
  if (!session.inputNames.includes(INPUT) || session.outputNames.length !== 1) {
    throw new Error(
      `${path} is not a Smart Turn v3 model (inputs ${session.inputNames.join(', ')}; outputs ${session.outputNames.join(', ')})`,
    );
  }
  const output = session.outputNames[0]!;
  return async (pcm) => {
    const features = new Tensor('float32', whisperLogMel(pcm), [1, N_MELS, N_FRAMES]);
    const result = await session.run({ [INPUT]: features });
    // The exported graph ends in a sigmoid: its single value is already a probability.
    return Number((result[output]!.data as Float32Array)[0]);
  };
}

/** A completion model on an inference function, one call at a time. */
export function smartTurnModel(infer: (pcm: Int16Array) => Promise<number>): TurnCompletionModel {
  let queue: Promise<unknown> = Promise.resolve();
  return {
    completion(pcm: Int16Array): Promise<number> {
      const next = queue.then(() => infer(pcm));
      queue = next.catch(() => undefined);
      return next;
    },
  };
}

/** The model loaded in this thread. */
export async function loadSmartTurn(path: string): Promise<TurnCompletionModel> {
  return smartTurnModel(smartTurnOn(await openModelSession(path), path));
}
