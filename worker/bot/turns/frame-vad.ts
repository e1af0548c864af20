import { levelDbfs } from '../audio.ts';
import type { SpeechProbabilityModel } from './types.ts';
import { LISTEN_SAMPLE_RATE } from './types.ts';

/**
 * Voice activity per fixed frame, whatever the engine: Silero's speech probability against a
 * threshold (with hysteresis: a frame inside speech needs less to count as speech, as Silero's
 * authors advise), or the energy level of VAD_THRESHOLD_DBFS (today's engine, kept as the fallback).
 */
export interface FrameVad {
  readonly frameBytes: number;
  readonly frameMs: number;
  /** Whether this frame of `frameBytes` is speech; `inSpeech` says whether the previous frames were. */
  isSpeech(frame: Buffer, inSpeech: boolean): Promise<boolean>;
  reset(): void;
}

/** Silero's advised gap between the threshold that starts speech and the one that keeps it. */
const HYSTERESIS = 0.15;

export function sileroFrameVad(model: SpeechProbabilityModel, threshold: number): FrameVad {
  return {
    frameBytes: model.frameSamples * 2,
    frameMs: (model.frameSamples / LISTEN_SAMPLE_RATE) * 1000,
    async isSpeech(frame, inSpeech) {
      const samples = new Int16Array(frame.buffer.slice(frame.byteOffset, frame.byteOffset + frame.byteLength));
      const p = await model.probability(samples);
      return p >= (inSpeech ? Math.max(0.01, threshold - HYSTERESIS) : threshold);
    },
    reset: () => model.reset(),
  };
}

export function energyFrameVad(thresholdDbfs: number, frameMs = 20): FrameVad {
  const frameBytes = Math.round((LISTEN_SAMPLE_RATE * frameMs) / 1000) * 2;
  return {
    frameBytes,
    frameMs,
    isSpeech: (frame) => Promise.resolve(levelDbfs(frame) >= thresholdDbfs),
    reset: () => undefined,
  };
}
