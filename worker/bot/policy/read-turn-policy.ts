import { boolVar, ConfigError, intVar, optionalString, type Env } from '../../../lib/env.ts';
import { checkTurnPolicy } from './turn-policy-rules.ts';
import { BARGE_IN_MODES, STT_MODES, TURN_DETECTIONS, TURN_POLICY_DEFAULTS, VAD_ENGINES, type TurnPolicy } from './turn-policy.ts';

/**
 * The turn policy from the environment: the one place its variables are read (worker/config.ts
 * calls it at start). Each variable keeps its name, bounds and default (TURN_POLICY_DEFAULTS); a
 * malformed value or a combination the rules refuse (turn-policy-rules.ts) is a ConfigError.
 */
export function readTurnPolicy(env: Env): TurnPolicy {
  const d = TURN_POLICY_DEFAULTS;
  const modelSilenceMs = intVar(env, 'TURN_MODEL_SILENCE_MS', { default: d.endpointing.modelSilenceMs, min: 60, max: 5000 });
  const sttModel = optionalString(env, 'STT_MODEL');
  const policy: TurnPolicy = {
    engines: {
      vad: oneOf(env, 'VAD_ENGINE', VAD_ENGINES, d.engines.vad),
      vadSpeechThreshold: fraction(env, 'VAD_SPEECH_THRESHOLD', d.engines.vadSpeechThreshold),
      vadThresholdDbfs: intVar(env, 'VAD_THRESHOLD_DBFS', { default: d.engines.vadThresholdDbfs, min: -90, max: 0 }),
      detection: oneOf(env, 'TURN_DETECTION', TURN_DETECTIONS, d.engines.detection),
      modelsDir: optionalString(env, 'TURN_MODELS_DIR') ?? d.engines.modelsDir,
      sttMode: oneOf(env, 'STT_MODE', STT_MODES, d.engines.sttMode),
      // The batch model's name is no realtime model; any other STT_MODEL is taken to be one.
      sttRealtimeModel:
        optionalString(env, 'STT_REALTIME_MODEL') ??
        (sttModel === undefined || sttModel === 'whisper-1' ? d.engines.sttRealtimeModel : sttModel),
    },
    endpointing: {
      minSpeechMs: intVar(env, 'VAD_MIN_SPEECH_MS', { default: d.endpointing.minSpeechMs, min: 20, max: 10_000 }),
      silenceMs: intVar(env, 'VAD_SILENCE_MS', { default: d.endpointing.silenceMs, min: 100, max: 10_000 }),
      modelSilenceMs,
      modelThreshold: fraction(env, 'TURN_MODEL_THRESHOLD', d.endpointing.modelThreshold),
      maxSilenceMs: intVar(env, 'TURN_MAX_SILENCE_MS', { default: d.endpointing.maxSilenceMs, min: 200, max: 10_000 }),
      modelEarlyMs: intVar(env, 'TURN_MODEL_EARLY_MS', { default: d.endpointing.modelEarlyMs, min: 0, max: modelSilenceMs }),
      modelReaskMs: intVar(env, 'TURN_MODEL_REASK_MS', { default: d.endpointing.modelReaskMs, min: 0, max: 10_000 }),
      wordsWaitMs: intVar(env, 'TURN_WORDS_WAIT_MS', { default: d.endpointing.wordsWaitMs, min: 0, max: 10_000 }),
      pauseLearningMaxMs: intVar(env, 'TURN_PAUSE_LEARNING_MAX_MS', { default: d.endpointing.pauseLearningMaxMs, min: 0, max: 3000 }),
      holdMs: intVar(env, 'TURN_HOLD_MS', { default: d.endpointing.holdMs, min: 0, max: 10_000 }),
      holdMaxWords: intVar(env, 'TURN_HOLD_MAX_WORDS', { default: d.endpointing.holdMaxWords, min: 1, max: 100 }),
      holdMaxVoicedMs: intVar(env, 'TURN_HOLD_MAX_VOICED_MS', { default: d.endpointing.holdMaxVoicedMs, min: 100, max: 60_000 }),
      maxUtteranceSeconds: intVar(env, 'MAX_UTTERANCE_SECONDS', { default: d.endpointing.maxUtteranceSeconds, min: 1, max: 600 }),
    },
    interruption: {
      enabled: boolVar(env, 'BARGE_IN', { default: d.interruption.enabled }),
      mode: oneOf(env, 'BARGE_IN_MODE', BARGE_IN_MODES, d.interruption.mode),
      minSpeechMs: intVar(env, 'BARGE_IN_MIN_SPEECH_MS', { default: d.interruption.minSpeechMs, min: 40, max: 5000 }),
      onsetMs: intVar(env, 'BARGE_IN_PAUSE_MS', { default: d.interruption.onsetMs, min: 0, max: 5000 }),
      confirmMs: intVar(env, 'BARGE_IN_CONFIRM_MS', { default: d.interruption.confirmMs, min: 40, max: 10_000 }),
    },
    reply: {
      eagerEnd: boolVar(env, 'REPLY_EAGER_END', { default: d.reply.eagerEnd }),
      firstClauseWords: intVar(env, 'REPLY_FIRST_CLAUSE_WORDS', { default: d.reply.firstClauseWords, min: 0, max: 100 }),
      llmWaitMaxMs: intVar(env, 'LLM_WAIT_MAX_MS', { default: d.reply.llmWaitMaxMs, min: 0, max: 30_000 }),
      llmWaitStepMs: intVar(env, 'LLM_WAIT_STEP_MS', { default: d.reply.llmWaitStepMs, min: 100, max: 30_000 }),
      llmPreemptive: boolVar(env, 'LLM_PREEMPTIVE', { default: d.reply.llmPreemptive }),
    },
  };
  checkTurnPolicy(policy);
  return policy;
}

function oneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const raw = optionalString(env, name) ?? fallback;
  if (!(values as readonly string[]).includes(raw))
    throw new ConfigError(name, `must be one of ${values.map((v) => `"${v}"`).join(', ')}, got "${raw}"`);
  return raw as T;
}

function fraction(env: Env, name: string, fallback: number): number {
  const raw = optionalString(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d*\.?\d+$/.test(raw) || !(value > 0 && value < 1))
    throw new ConfigError(name, `must be a number between 0 and 1 (exclusive), got "${raw}"`);
  return value;
}
