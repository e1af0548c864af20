import { Tensor } from 'onnxruntime-node';
import { openModelSession } from './onnx-session.ts';
import type { TurnCompletionModel } from './types.ts';
import { N_FRAMES, N_MELS, whisperLogMel } from './whisper-features.ts';

/**
 * Smart Turn v3 (pipecat-ai's end-of-turn model): the last 8 s of the turn as Whisper log-mel
 * features in, the probability that the speaker has finished out. It hears only prosody, not words.
 * Calls are queued: one inference at a time per bot, as the model runs on one thread anyway.
 */
const INPUT = 'input_features';

export async function loadSmartTurn(path: string): Promise<TurnCompletionModel> {
  const session = await openModelSession(path);
  if (!session.inputNames.includes(INPUT) || session.outputNames.length !== 1) {
    throw new Error(`${path} is not a Smart Turn v3 model (inputs ${session.inputNames.join(', ')}; outputs ${session.outputNames.join(', ')})`);
  }
  const output = session.outputNames[0]!;
  let queue: Promise<unknown> = Promise.resolve();
  const infer = async (pcm: Int16Array): Promise<number> => {
    const features = new Tensor('float32', whisperLogMel(pcm), [1, N_MELS, N_FRAMES]);
    const result = await session.run({ [INPUT]: features });
    // The exported graph ends in a sigmoid: its single value is already a probability.
    return Number((result[output]!.data as Float32Array)[0]);
  };
  return {
    completion(pcm: Int16Array): Promise<number> {
      const next = queue.then(() => infer(pcm));
      queue = next.catch(() => undefined);
      return next;
    },
  };
}
