import { describe, expect, it } from 'vitest';
import { readTurnPolicy } from './read-turn-policy.ts';
import { commitPointMs, onsetPauseMs, TURN_POLICY_DEFAULTS } from './turn-policy.ts';

/**
 * The turn policy read from the environment: every variable keeps the name and the default it had
 * before the policy was one object (issue 40), and lands in its group.
 */
describe('the turn policy', () => {
  it("defaults to today's values, grouped, from one frozen object", () => {
    expect(readTurnPolicy({})).toEqual({
      engines: {
        vad: 'silero',
        vadSpeechThreshold: 0.5,
        vadThresholdDbfs: -45,
        detection: 'model',
        modelsDir: null,
        sttMode: 'realtime',
        sttRealtimeModel: 'gpt-4o-mini-transcribe',
      },
      endpointing: {
        minSpeechMs: 120,
        silenceMs: 700,
        modelSilenceMs: 200,
        modelThreshold: 0.5,
        maxSilenceMs: 1600,
        modelEarlyMs: 100,
        modelReaskMs: 400,
        wordsWaitMs: 1500,
        pauseLearningMaxMs: 600,
        holdMs: 2200,
        holdMaxWords: 7,
        holdMaxVoicedMs: 2500,
        maxUtteranceSeconds: 60,
      },
      interruption: { enabled: true, mode: 'pause', minSpeechMs: 120, onsetMs: 64, confirmMs: 700 },
      reply: { eagerEnd: true, firstClauseWords: 6, llmWaitMaxMs: 4000, llmWaitStepMs: 1500, llmPreemptive: true },
    });
    expect(readTurnPolicy({})).toEqual(TURN_POLICY_DEFAULTS);
    expect(Object.isFrozen(TURN_POLICY_DEFAULTS) && Object.values(TURN_POLICY_DEFAULTS).every((group) => Object.isFrozen(group))).toBe(
      true,
    );
    // What is read is the caller's own (nothing shared with the defaults).
    expect(readTurnPolicy({}).engines).not.toBe(TURN_POLICY_DEFAULTS.engines);
  });

  it('reads each variable by its name into its group', () => {
    const env = {
      VAD_ENGINE: 'energy',
      VAD_SPEECH_THRESHOLD: '0.6',
      VAD_THRESHOLD_DBFS: '-40',
      TURN_DETECTION: 'silence',
      TURN_MODELS_DIR: '/models',
      STT_MODE: 'batch',
      STT_REALTIME_MODEL: 'rt',
      VAD_MIN_SPEECH_MS: '100',
      VAD_SILENCE_MS: '900',
      TURN_MODEL_SILENCE_MS: '300',
      TURN_MODEL_THRESHOLD: '0.7',
      TURN_MAX_SILENCE_MS: '2000',
      TURN_MODEL_EARLY_MS: '50',
      TURN_MODEL_REASK_MS: '0',
      TURN_WORDS_WAIT_MS: '300',
      TURN_PAUSE_LEARNING_MAX_MS: '0',
      TURN_HOLD_MS: '3000',
      TURN_HOLD_MAX_WORDS: '5',
      TURN_HOLD_MAX_VOICED_MS: '1800',
      MAX_UTTERANCE_SECONDS: '30',
      BARGE_IN: 'true',
      BARGE_IN_MODE: 'stop',
      BARGE_IN_MIN_SPEECH_MS: '200',
      BARGE_IN_PAUSE_MS: '32',
      BARGE_IN_CONFIRM_MS: '900',
      REPLY_EAGER_END: 'false',
      REPLY_FIRST_CLAUSE_WORDS: '0',
      LLM_WAIT_MAX_MS: '0',
      LLM_WAIT_STEP_MS: '1000',
      LLM_PREEMPTIVE: 'false',
    };
    expect(readTurnPolicy(env)).toEqual({
      engines: {
        vad: 'energy',
        vadSpeechThreshold: 0.6,
        vadThresholdDbfs: -40,
        detection: 'silence',
        modelsDir: '/models',
        sttMode: 'batch',
        sttRealtimeModel: 'rt',
      },
      endpointing: {
        minSpeechMs: 100,
        silenceMs: 900,
        modelSilenceMs: 300,
        modelThreshold: 0.7,
        maxSilenceMs: 2000,
        modelEarlyMs: 50,
        modelReaskMs: 0,
        wordsWaitMs: 300,
        pauseLearningMaxMs: 0,
        holdMs: 3000,
        holdMaxWords: 5,
        holdMaxVoicedMs: 1800,
        maxUtteranceSeconds: 30,
      },
      interruption: { enabled: true, mode: 'stop', minSpeechMs: 200, onsetMs: 32, confirmMs: 900 },
      reply: { eagerEnd: false, firstClauseWords: 0, llmWaitMaxMs: 0, llmWaitStepMs: 1000, llmPreemptive: false },
    });
  });

  it('takes the realtime model from STT_MODEL unless it is the batch-only whisper-1', () => {
    expect(readTurnPolicy({ STT_MODEL: 'whisper-1' }).engines.sttRealtimeModel).toBe('gpt-4o-mini-transcribe');
    expect(readTurnPolicy({ STT_MODEL: 'local-whisper' }).engines.sttRealtimeModel).toBe('local-whisper');
  });

  it('derives the commit point and the onset pause where their settings meet', () => {
    expect(commitPointMs({ modelSilenceMs: 200, silenceMs: 700 })).toBe(200);
    expect(commitPointMs({ modelSilenceMs: 200, silenceMs: 150 })).toBe(150);
    expect(onsetPauseMs(TURN_POLICY_DEFAULTS.interruption)).toBe(64);
    expect(onsetPauseMs({ ...TURN_POLICY_DEFAULTS.interruption, mode: 'stop' })).toBe(0);
    expect(onsetPauseMs({ ...TURN_POLICY_DEFAULTS.interruption, enabled: false })).toBe(0);
  });
});
