import type { WorkerConfig } from '../config.ts';
import type { Providers } from '../providers/index.ts';
import type { InterviewHooks } from './hooks.ts';
import { Listener, type ListenerSettings } from './listener.ts';
import type { Playback } from './playback.ts';
import { commitPointMs, onsetPauseMs } from './policy/turn-policy.ts';
import type { BotRoom } from './room-link.ts';
import { energyFrameVad, sileroFrameVad, type FrameVad } from './turns/frame-vad.ts';
import type { TurnModels } from './turns/models.ts';
import { TurnTranscriber } from './turns/transcriber.ts';
import type { TurnDetectorSettings } from './turns/turn-detector.ts';
import type { TurnCompletionModel } from './turns/types.ts';
import { LISTEN_SAMPLE_RATE } from './turns/types.ts';

/**
 * The listener, built from the worker's configuration. This is the one place where the settings
 * of turn-taking become the detector's and the listener's, and where it is decided which engines
 * run: Silero or the energy VAD, the end-of-turn model or silence alone, realtime or batch text.
 */
export type ListeningConfig = Pick<WorkerConfig, 'idleTimeoutSeconds' | 'turns'>;

export interface ListeningPlan {
  vad: FrameVad;
  /** The end-of-turn model, when TURN_DETECTION=model and it is loaded; null: silence decides. */
  turnModel: TurnCompletionModel | null;
  realtimeText: boolean;
  detector: TurnDetectorSettings;
  listener: ListenerSettings;
}

/** A stall (no audio at all inside a turn) ends it a little after the longest silence would. */
const STALL_MARGIN_MS = 500;

export function planListening(config: ListeningConfig, models: TurnModels): ListeningPlan {
  const { engines, endpointing: e, interruption } = config.turns;
  const turnModel = engines.detection === 'model' ? models.turn : null;
  const maxUtteranceBytes = e.maxUtteranceSeconds * LISTEN_SAMPLE_RATE * 2;
  return {
    vad:
      models.vad && engines.vad === 'silero'
        ? sileroFrameVad(models.vad.open(), engines.vadSpeechThreshold)
        : energyFrameVad(engines.vadThresholdDbfs),
    turnModel,
    realtimeText: engines.sttMode === 'realtime',
    detector: {
      minSpeechMs: e.minSpeechMs,
      silenceMs: e.silenceMs,
      modelSilenceMs: e.modelSilenceMs,
      maxSilenceMs: e.maxSilenceMs,
      modelEarlyMs: e.modelEarlyMs,
      modelReaskMs: e.modelReaskMs,
      modelThreshold: e.modelThreshold,
      onsetMs: onsetPauseMs(interruption),
      holdMs: e.holdMs,
      holdMaxWords: e.holdMaxWords,
      holdMaxVoicedMs: e.holdMaxVoicedMs,
      maxUtteranceBytes,
      // Audio waiting to be classified: an answer that arrives in one burst fits whole; a flood
      // beyond one utterance's worth is dropped as it arrives, so memory stays bounded.
      maxBacklogBytes: maxUtteranceBytes,
    },
    listener: {
      idleTimeoutSeconds: config.idleTimeoutSeconds,
      maxUtteranceSeconds: e.maxUtteranceSeconds,
      bargeIn: interruption.enabled,
      bargeInMinSpeechMs: interruption.minSpeechMs,
      bargeInConfirmMs: interruption.confirmMs,
      // The longest silence: the silence rule, or a hold grown by what the respondent's own pauses add (TURN_PAUSE_LEARNING_MAX_MS).
      stallMs: Math.max(e.maxSilenceMs, e.silenceMs, e.holdMs + e.pauseLearningMaxMs) + STALL_MARGIN_MS,
      // Learning lengthens the hold, so what counts is a pause longer than it (issue 40); with no hold nothing is learned.
      pauseLearning: {
        baseMs: e.holdMs > 0 ? e.holdMs : turnModel ? commitPointMs(e) : e.silenceMs,
        maxExtraMs: e.holdMs > 0 ? e.pauseLearningMaxMs : 0,
      },
      wordsWaitMs: e.wordsWaitMs,
    },
  };
}

export interface ListenerParts {
  room: BotRoom;
  providers: Pick<Providers, 'stt' | 'sttStream'>;
  models: TurnModels;
  playback: Playback;
  hooks: InterviewHooks;
  language: string;
  signal: AbortSignal;
  /** Respondent speech over the bot (the dialogue stops its voice). */
  onBargeIn(): void;
  /** The respondent started a turn. */
  onSpeechStart?(): void;
  /** What speech over the bot turned out to be (listener.ts). */
  onBargeInSettled?(outcome: 'interruption' | 'backchannel'): void;
  clock: () => number;
}

export function createListener(config: ListeningConfig, parts: ListenerParts): Listener {
  const plan = planListening(config, parts.models);
  // A bot runs one session after another: no state of the VAD carries over.
  plan.vad.reset();
  return new Listener({
    room: parts.room,
    detector: { vad: plan.vad, model: plan.turnModel, settings: plan.detector, clock: parts.clock },
    transcriber: new TurnTranscriber({
      batch: parts.providers.stt,
      streaming: plan.realtimeText ? parts.providers.sttStream : null,
      language: parts.language,
      signal: parts.signal,
      onStreamingUnavailable: (reason) => parts.hooks.streamingUnavailable(reason),
    }),
    playback: parts.playback,
    language: parts.language,
    settings: plan.listener,
    signal: parts.signal,
    onBargeIn: parts.onBargeIn,
    ...(parts.onSpeechStart ? { onSpeechStart: parts.onSpeechStart } : {}),
    ...(parts.onBargeInSettled ? { onBargeInSettled: parts.onBargeInSettled } : {}),
    onBound: () => parts.hooks.utteranceBound(),
    clock: parts.clock,
  });
}
