/**
 * The bot's turn policy: every setting of turn-taking, typed and grouped by what it decides, with
 * its defaults as one object (TURN_POLICY_DEFAULTS). It is read from the environment in one place
 * (read-turn-policy.ts, called by worker/config.ts), its cross-field rules are checked there
 * (turn-policy-rules.ts), and the hearing side (listening.ts) and the reply side (interview.ts,
 * dialogue.ts) take their parts of it. Each field names its variable; docs/worker.md
 * ("Configuration", "Turn-taking") says what each does.
 */
export const VAD_ENGINES = ['silero', 'energy'] as const;
export const TURN_DETECTIONS = ['model', 'silence'] as const;
export const STT_MODES = ['realtime', 'batch'] as const;
export const BARGE_IN_MODES = ['pause', 'stop'] as const;

/** Which engines hear the respondent. */
export interface TurnEngines {
  /** VAD_ENGINE. `silero`: Silero VAD (ONNX); `energy`: the level threshold of `vadThresholdDbfs`. */
  vad: (typeof VAD_ENGINES)[number];
  /** VAD_SPEECH_THRESHOLD: Silero's speech probability above which a frame is speech. */
  vadSpeechThreshold: number;
  /** VAD_THRESHOLD_DBFS: the energy engine's level above which a 20 ms window is speech. */
  vadThresholdDbfs: number;
  /** TURN_DETECTION. `model`: short silence, then the end-of-turn model decides; `silence`: `silenceMs` of silence. */
  detection: (typeof TURN_DETECTIONS)[number];
  /** TURN_MODELS_DIR: where silero_vad.onnx and the Smart Turn model are; null: the default cache (turns/models.ts). */
  modelsDir: string | null;
  /** STT_MODE. `realtime`: transcribe while the respondent speaks (WebSocket); `batch`: upload each finished turn. */
  sttMode: (typeof STT_MODES)[number];
  /** STT_REALTIME_MODEL: the transcription model of the realtime session (default: STT_MODEL unless it is whisper-1). */
  sttRealtimeModel: string;
}

/** Where a turn starts and ends. */
export interface Endpointing {
  /** VAD_MIN_SPEECH_MS: voiced time that starts a turn (clicks and coughs are ignored). */
  minSpeechMs: number;
  /** VAD_SILENCE_MS: the silence that ends a turn with silence detection (and, for both, the latest commit point). */
  silenceMs: number;
  /** TURN_MODEL_SILENCE_MS: the commit point; silence after which the end-of-turn model is asked. */
  modelSilenceMs: number;
  /** TURN_MODEL_THRESHOLD: the model's probability at or above which the turn has ended. */
  modelThreshold: number;
  /** TURN_MAX_SILENCE_MS: the longest pause inside a turn; the turn ends after this much silence whatever the model says. */
  maxSilenceMs: number;
  /** TURN_MODEL_EARLY_MS: ask the model this long before the commit point, so its answer is ready at it; 0: at it. */
  modelEarlyMs: number;
  /** TURN_MODEL_REASK_MS: ask it again every this much more silence while it says "not finished"; 0: once per pause. */
  modelReaskMs: number;
  /** TURN_WORDS_WAIT_MS: how long the model's "finished" waits for the pause's words before it stands on its own. */
  wordsWaitMs: number;
  /** TURN_PAUSE_LEARNING_MAX_MS: the most a respondent's own long pauses can add to the hold (TURN_HOLD_MS); 0: no learning. */
  pauseLearningMaxMs: number;
  /** TURN_HOLD_MS: a short answer to an open question may end only after this much silence, however finished it sounds (endpointing.ts); 0: nothing is held. */
  holdMs: number;
  /** TURN_HOLD_MAX_WORDS: an answer of at most this many words (so far) is short enough to be held. */
  holdMaxWords: number;
  /** TURN_HOLD_MAX_VOICED_MS: while the words of a pause are not in, an answer with less speech than this is held. */
  holdMaxVoicedMs: number;
  /** MAX_UTTERANCE_SECONDS: a turn that never pauses ends here. */
  maxUtteranceSeconds: number;
}

/** What speech over the bot does (barge-in). */
export interface Interruption {
  /** BARGE_IN: respondent speech while the bot is audible pauses or stops it. */
  enabled: boolean;
  /** BARGE_IN_MODE. `pause`: the voice pauses until the speech is judged (a backchannel resumes it); `stop`: it stops at once. */
  mode: (typeof BARGE_IN_MODES)[number];
  /** BARGE_IN_MIN_SPEECH_MS: speech in a started turn that counts as a barge-in. */
  minSpeechMs: number;
  /** BARGE_IN_PAUSE_MS: pause mode, voiced time over the bot after which its voice pauses, before a turn starts; 0: off. */
  onsetMs: number;
  /** BARGE_IN_CONFIRM_MS: speech this long is an interruption whatever its words. */
  confirmMs: number;
}

/** How the bot answers. */
export interface ReplyPolicy {
  /** REPLY_EAGER_END: a ? ! or … at the end of a streamed follow-up so far sends its sentence to speech at once. */
  eagerEnd: boolean;
  /** REPLY_FIRST_CLAUSE_WORDS: a streamed follow-up's first clause of at least this many words is spoken alone; 0: off. */
  firstClauseWords: number;
  /** LLM_WAIT_MAX_MS: the language model may answer WAIT until the silence after the last word reaches this; 0: never offered. */
  llmWaitMaxMs: number;
  /** LLM_WAIT_STEP_MS: after a WAIT, decide again each time the silence has grown by this much. */
  llmWaitStepMs: number;
  /** LLM_PREEMPTIVE: start the decision call on the words of a pause; keep its reply if the final words match. */
  llmPreemptive: boolean;
}

export type InterruptionMode = Interruption['mode'];

export interface TurnPolicy {
  engines: TurnEngines;
  endpointing: Endpointing;
  interruption: Interruption;
  reply: ReplyPolicy;
}

/** Every default of the turn policy, in one place (the defaults docs/worker.md lists). */
export const TURN_POLICY_DEFAULTS: DeepReadonly<TurnPolicy> = deepFreeze({
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
} satisfies TurnPolicy);

type DeepReadonly<T> = { readonly [K in keyof T]: T[K] extends object | null ? Readonly<T[K]> : T[K] };

function deepFreeze<T extends TurnPolicy>(policy: T): DeepReadonly<T> {
  for (const group of Object.values(policy)) Object.freeze(group);
  return Object.freeze(policy);
}

/** The silence at which a pause commits its words and the model is asked: TURN_MODEL_SILENCE_MS, or VAD_SILENCE_MS when shorter (silence detection). */
export function commitPointMs(endpointing: Pick<Endpointing, 'modelSilenceMs' | 'silenceMs'>): number {
  return Math.min(endpointing.modelSilenceMs, endpointing.silenceMs);
}

/** The voiced time at which a speech onset pauses the bot before a turn starts (0: no onset pause). */
export function onsetPauseMs(interruption: Pick<Interruption, 'enabled' | 'mode' | 'onsetMs'>): number {
  // Only pause mode reacts before a turn starts: a stop could not be undone if the speech breaks off.
  return interruption.enabled && interruption.mode === 'pause' ? interruption.onsetMs : 0;
}
