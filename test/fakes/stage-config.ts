import type { InterviewConfig } from '../../worker/bot/interview.ts';

/**
 * The interview settings the stage unit tests run with: the pipeline before 1.3 (energy VAD, a turn
 * ends after 300 ms of silence, batch text) with barge-in on, short timeouts, a 10 s utterance bound.
 * A tone is speech to the energy VAD and digital silence is not, so tests need no speech model.
 */
export const STAGE_CONFIG: InterviewConfig = {
  joinTimeoutSeconds: 5,
  maxSessionSeconds: 300,
  idleTimeoutSeconds: 5,
  vad: { thresholdDbfs: -45, silenceMs: 300, minSpeechMs: 100, maxUtteranceSeconds: 10 },
  turns: {
    vadEngine: 'energy', vadSpeechThreshold: 0.5, detection: 'silence', modelSilenceMs: 200, modelThreshold: 0.5, maxSilenceMs: 1600, modelEarlyMs: 100, modelReaskMs: 400,
    modelsDir: null, sttMode: 'batch', sttRealtimeModel: 'none', bargeIn: true, bargeInMinSpeechMs: 200, bargeInPauseMs: 0, bargeInConfirmMs: 700, bargeInMode: 'pause',
    replyEagerEnd: true, replyFirstClauseWords: 6, llmWaitMaxMs: 4000, llmWaitStepMs: 1500, llmPreemptive: true, pauseLearningMaxMs: 600, wordsWaitMs: 1500,
  },
};
