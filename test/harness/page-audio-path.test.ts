import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../worker/config.ts';
import { planListening } from '../../worker/bot/listening.ts';
import { resolveTurnModels } from '../../worker/bot/turns/models.ts';
import { loadSileroVadSource } from '../../worker/bot/turns/silero-vad.ts';
import { TurnDetector } from '../../worker/bot/turns/turn-detector.ts';
import type { SpeechProbabilitySource } from '../../worker/bot/turns/types.ts';
import { answerClips } from './node-interview.ts';
import { DRAWN_OUT_OKAY, throughPageAudioPath } from './page-audio-path.ts';
import { turnModelsDir } from './turn-models.ts';

/**
 * The page tests' backchannel stops the bot every time (test/e2e/turn-taking-page.test.ts waits for
 * that pause): through a model of the page's audio path, at every frame alignment, the worker's own
 * detector with its default settings hears more than BARGE_IN_MIN_SPEECH_MS of speech in it (a
 * barge-in) and less than BARGE_IN_CONFIRM_MS (not an interruption), each with a margin of two frames.
 */
const config = loadConfig({
  WORKER_TOKEN: 'test-token-of-16-chars',
  BACKEND_URL: 'http://127.0.0.1:9',
  OPENAI_API_KEY: 'test-key',
  ROOM_PROVIDER: 'local',
});
let vad: SpeechProbabilitySource;

beforeAll(async () => {
  vad = await loadSileroVadSource(resolveTurnModels(turnModelsDir()).sileroVad);
});

/** The most speech the detector counted in one turn, and whether a turn started at all. */
async function speechHeard(samples: Int16Array): Promise<number> {
  const plan = planListening(config, { vad, turn: null });
  let most = 0;
  const detector = new TurnDetector({
    vad: plan.vad,
    model: null,
    settings: plan.detector,
    onEvent: (event) => {
      if (event.type === 'turn_end') most = Math.max(most, event.end.speechMs);
      else most = Math.max(most, detector.currentSpeechMs);
    },
  });
  // Two seconds of silence first (the microphone quiet while the question plays; after a shorter
  // silence Silero hears more of a short word), then the clip, then a second.
  const lead = 32_000;
  const pcm = Buffer.alloc((lead + samples.length + 16_000) * 2);
  Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength).copy(pcm, lead * 2);
  for (let at = 0; at < pcm.length; at += 640) detector.push(pcm.subarray(at, at + 640));
  await detector.drained();
  detector.close();
  return most;
}

describe("the page tests' backchannel", () => {
  it('is heard as a barge-in and not as an interruption wherever the frames fall', async () => {
    const [clip] = answerClips([DRAWN_OUT_OKAY], 'piper');
    const samples = new Int16Array(clip!.buffer, clip!.byteOffset, clip!.length >> 1);
    const { minSpeechMs: bargeInMinSpeechMs, confirmMs: bargeInConfirmMs } = config.turns.interruption;
    const heard: number[] = [];
    for (const rate of [48_000, 44_100]) {
      for (const phase of [0, 0.5]) {
        const path = throughPageAudioPath(samples, rate, phase);
        // The VAD's 32 ms frames start anywhere in the clip: shift it by 0 to 480 samples.
        for (let shift = 0; shift < 512; shift += 32) {
          const shifted = new Int16Array(shift + path.length);
          shifted.set(path, shift);
          heard.push(await speechHeard(shifted));
        }
      }
    }
    const margin = 2 * 32;
    expect(Math.min(...heard), heard.join(' ')).toBeGreaterThanOrEqual(bargeInMinSpeechMs + margin);
    expect(Math.max(...heard), heard.join(' ')).toBeLessThan(bargeInConfirmMs - margin);
  }, 120_000);
});
