import type { InterviewConfig } from '../../worker/bot/interview.ts';
import type { TurnPolicy } from '../../worker/bot/policy/turn-policy.ts';

/**
 * The interview settings the stage unit tests run with: the pipeline before 1.3 (energy VAD, a turn
 * ends after 300 ms of silence, nothing held, batch text) with barge-in on, short timeouts, a 10 s utterance bound.
 * A tone is speech to the energy VAD and digital silence is not, so tests need no speech model.
 */
export const STAGE_CONFIG: InterviewConfig = {
  joinTimeoutSeconds: 5,
  maxSessionSeconds: 300,
  idleTimeoutSeconds: 5,
  turns: {
    engines: {
      vad: 'energy',
      vadSpeechThreshold: 0.5,
      vadThresholdDbfs: -45,
      detection: 'silence',
      modelsDir: null,
      sttMode: 'batch',
      sttRealtimeModel: 'none',
    },
    endpointing: {
      minSpeechMs: 100,
      silenceMs: 300,
      modelSilenceMs: 200,
      modelThreshold: 0.5,
      maxSilenceMs: 1600,
      modelEarlyMs: 100,
      modelReaskMs: 400,
      wordsWaitMs: 1500,
      pauseLearningMaxMs: 600,
      holdMs: 0,
      holdMaxWords: 7,
      holdMaxVoicedMs: 2500,
      maxUtteranceSeconds: 10,
    },
    interruption: { enabled: true, mode: 'pause', minSpeechMs: 200, onsetMs: 0, confirmMs: 700 },
    reply: { eagerEnd: true, firstClauseWords: 6, llmWaitMaxMs: 4000, llmWaitStepMs: 1500, llmPreemptive: true },
  },
};

type TurnPolicyPatch = { [K in keyof TurnPolicy]?: Partial<TurnPolicy[K]> };

/** `config` with some settings of its turn policy changed (each group merged, not replaced). */
export function withTurns<T extends Pick<InterviewConfig, 'turns'>>(config: T, patch: TurnPolicyPatch): T {
  const { turns } = config;
  return {
    ...config,
    turns: {
      engines: { ...turns.engines, ...patch.engines },
      endpointing: { ...turns.endpointing, ...patch.endpointing },
      interruption: { ...turns.interruption, ...patch.interruption },
      reply: { ...turns.reply, ...patch.reply },
    },
  };
}
