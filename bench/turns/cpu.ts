import { silencePcm } from '../../lib/pcm.ts';
import { loadConfig } from '../../worker/config.ts';
import { planListening } from '../../worker/bot/listening.ts';
import { loadTurnModels } from '../../worker/bot/turns/models.ts';
import { TurnDetector } from '../../worker/bot/turns/turn-detector.ts';
import type { TurnCompletionModel } from '../../worker/bot/turns/types.ts';
import { baseEnv } from '../../test/worker/harness.ts';
import type { AnswerItem } from './answer-set.ts';

/**
 * CPU per live session of voice-activity detection and the end-of-turn model, measured in this
 * process with the bot's own parts: the TurnDetector over the FrameVad and model the pipeline's
 * settings select (worker/config.ts, as the worker reads them), fed the answer set in 20 ms frames,
 * each answer followed by 2 s of silence (so every turn ends as in a session). The end-of-turn
 * model is asked where the pipeline asks it: once per pause reaching TURN_MODEL_SILENCE_MS.
 * process.cpuUsage() (all threads, ONNX Runtime's included) over the seconds of audio fed = the
 * share of one core that one session keeps busy.
 */
const FRAME_BYTES = 640; // 20 ms at 16 kHz: the microphone's frames
const GAP_MS = 2000;

export interface DetectorCpu {
  /** VAD alone (detection by silence), share of one core. */
  vad: number;
  /** VAD and the end-of-turn model as the pipeline runs them. */
  vadAndTurn: number;
  /** End-of-turn model calls over the set. */
  modelCalls: number;
  audioSeconds: number;
}

async function feed(items: readonly AnswerItem[], detector: TurnDetector, pending: () => Promise<unknown>): Promise<void> {
  const gap = silencePcm(GAP_MS, 16_000);
  for (const item of items) {
    for (const pcm of [item.pcm, gap]) {
      for (let i = 0; i < pcm.length; i += FRAME_BYTES) {
        detector.push(pcm.subarray(i, i + FRAME_BYTES));
        await detector.drained();
        // The model answers within a few frames in real time; waiting for it here keeps its
        // verdict (and so the number of calls per pause) what it is live.
        await pending();
      }
    }
  }
}

export async function detectorCpu(
  items: readonly AnswerItem[],
  pipelineEnv: Record<string, string>,
  modelsDir: string | null,
): Promise<DetectorCpu> {
  const config = loadConfig({
    ...baseEnv({ redisUrl: 'redis://127.0.0.1:6379', backendUrl: 'http://127.0.0.1:1', llmUrl: 'http://127.0.0.1:1/v1' }),
    ...pipelineEnv,
  });
  const engines = { ...config.turns.engines, modelsDir: config.turns.engines.modelsDir ?? modelsDir };
  const models = await loadTurnModels(engines);
  const audioSeconds = items.reduce((s, i) => s + i.pcm.length / 32_000 + GAP_MS / 1000, 0);
  // The detector's engines and settings as the bot plans them (worker/bot/listening.ts).
  const plan = planListening(config, models);
  const run = async (withModel: boolean): Promise<{ share: number; calls: number }> => {
    plan.vad.reset();
    let calls = 0;
    let inFlight: Promise<unknown> = Promise.resolve();
    const counted: TurnCompletionModel | null =
      withModel && plan.turnModel
        ? {
            completion: (pcm) => {
              calls++;
              const answer = plan.turnModel!.completion(pcm);
              inFlight = answer.catch(() => undefined);
              return answer;
            },
          }
        : null;
    const detector = new TurnDetector({
      vad: plan.vad,
      model: counted,
      settings: plan.detector,
      onEvent: () => undefined,
    });
    const before = process.cpuUsage();
    await feed(items, detector, () => inFlight);
    const used = process.cpuUsage(before);
    detector.close();
    return { share: (used.user + used.system) / 1e6 / audioSeconds, calls };
  };
  await run(true); // warm-up: JIT and ONNX Runtime's first runs
  const vad = await run(false);
  const both = await run(true);
  return { vad: vad.share, vadAndTurn: both.share, modelCalls: both.calls, audioSeconds };
}
