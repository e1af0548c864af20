import { Decimator } from '../../api-stub/respondent/client/decimate.ts';
import type { SpokenAnswer } from './speech.ts';

/**
 * A model of what the respondent page does to a clip the test speaks into its microphone
 * (scripted-microphone.ts, then api-stub/respondent/client/local-room.ts): the 16 kHz clip is played
 * in a Web Audio context at `contextRate` (modelled by linear interpolation from a sub-sample
 * `phase`; Chromium's own resampler is finer), and the capture worklet decimates it back to 16 kHz
 * with the page's own Decimator. What the worker's VAD hears of a short word depends on this path
 * and on where its 32 ms frames fall, which the real path sets by chance (docs/testing.md).
 */
export function throughPageAudioPath(samples: Int16Array, contextRate: number, phase: number): Int16Array {
  const length = Math.floor(((samples.length - 1) * contextRate) / 16_000);
  const played = new Float32Array(length);
  for (let i = 0; i < length; i++) {
    const at = ((i + phase) * 16_000) / contextRate;
    const k = Math.floor(at);
    const f = at - k;
    played[i] = ((samples[k] ?? 0) * (1 - f) + (samples[k + 1] ?? 0) * f) / 32768;
  }
  const out: number[] = [];
  const decimator = new Decimator(contextRate);
  // The worklet gets 128-sample render quanta.
  for (let i = 0; i < played.length; i += 128) decimator.push(played.subarray(i, i + 128), (v) => out.push(v));
  return Int16Array.from(out);
}

/**
 * The backchannel the page tests say over the interviewer: "Okay." drawn out. At Piper's own pace
 * (325 ms) the VAD heard as little as 192 ms of it through the page, under BARGE_IN_MIN_SPEECH_MS,
 * and the bot rightly spoke on without pausing; the tests need it to pause every time.
 */
export const DRAWN_OUT_OKAY: SpokenAnswer = { parts: ['Okay.'], pauseMs: 0, speed: 0.7 };
