import { ConfigError } from '../../../lib/env.ts';
import { commitPointMs, type TurnPolicy } from './turn-policy.ts';

/**
 * The turn policy's cross-field rules: a combination of settings where one would silently undo or
 * cap another is refused at start with a ConfigError naming the variable to change, rather than
 * run as something the operator did not ask for. Each rule applies only where the setting takes
 * effect (a barge-in rule with BARGE_IN=true, the onset with BARGE_IN_MODE=pause, the commit point
 * with TURN_DETECTION=model). The defaults pass every rule.
 */
export function checkTurnPolicy(policy: TurnPolicy): void {
  const { endpointing: e, interruption: i, engines } = policy;
  if (e.maxSilenceMs < e.modelSilenceMs)
    throw new ConfigError('TURN_MAX_SILENCE_MS', `must be at least TURN_MODEL_SILENCE_MS (${e.modelSilenceMs})`);
  // The commit point is the shorter of the two: with the model deciding, a shorter VAD_SILENCE_MS
  // would move it (and the model's first question) earlier without saying so.
  if (engines.detection === 'model' && e.silenceMs < e.modelSilenceMs) {
    throw new ConfigError(
      'VAD_SILENCE_MS',
      `must be at least TURN_MODEL_SILENCE_MS (${e.modelSilenceMs}) with TURN_DETECTION=model: a shorter one caps the commit point at ${e.silenceMs} ms`,
    );
  }
  // A hold no longer than the silence that ends a turn anyway (or commits it) would hold nothing.
  const heldFrom = engines.detection === 'model' ? commitPointMs(e) : e.silenceMs;
  if (e.holdMs > 0 && e.holdMs <= heldFrom) {
    throw new ConfigError(
      'TURN_HOLD_MS',
      `must be 0 (off) or above ` +
        `${engines.detection === 'model' ? 'the commit point, TURN_MODEL_SILENCE_MS' : 'VAD_SILENCE_MS'} ` +
        `(${heldFrom}): a shorter hold holds nothing`,
    );
  }
  if (i.confirmMs < i.minSpeechMs)
    throw new ConfigError('BARGE_IN_CONFIRM_MS', `must be at least BARGE_IN_MIN_SPEECH_MS (${i.minSpeechMs})`);
  if (!i.enabled) return;
  // A barge-in is judged inside a started turn, which has at least VAD_MIN_SPEECH_MS of speech.
  if (i.minSpeechMs < e.minSpeechMs) {
    throw new ConfigError(
      'BARGE_IN_MIN_SPEECH_MS',
      `must be at least VAD_MIN_SPEECH_MS (${e.minSpeechMs}) with BARGE_IN=true: a turn starts only after that ` +
        `much speech, so less has no effect (BARGE_IN_PAUSE_MS pauses the bot sooner)`,
    );
  }
  // The onset is a voiced run shorter than a turn's start: at or past it, a turn starts first.
  if (i.mode === 'pause' && i.onsetMs > 0 && i.onsetMs >= e.minSpeechMs) {
    throw new ConfigError(
      'BARGE_IN_PAUSE_MS',
      `must be below VAD_MIN_SPEECH_MS (${e.minSpeechMs}) with BARGE_IN_MODE=pause, or 0 to pause only once a turn ` +
        `has started: at ${i.onsetMs} the onset pause would never happen`,
    );
  }
}
