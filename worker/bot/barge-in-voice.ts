import type { InterruptionMode } from './policy/turn-policy.ts';
import type { BotEventSink } from '../telemetry/bot-events.ts';
import type { BotRoom } from './room-link.ts';
import type { Speaker } from './speaker.ts';
import type { BargeInOutcome, BargeInVoice } from './turns/barge-in.ts';

/**
 * The barge-in machine's hold on the bot's voice (turns/barge-in.ts drives it): what its first
 * reaction and its verdict do to the speaker, by BARGE_IN_MODE. In pause mode the first reaction
 * pauses the voice, keeping what was not heard; a backchannel resumes it from the paused frame (the
 * page, which dropped its queue at the pause, hears the bot speaking again) and an interruption
 * drops it. In stop mode the first reaction stops the voice for good and the verdict changes
 * nothing here (the dialogue goes on from the sentence after a backchannel). Each stop for good is
 * counted as a `barge_in` interruption.
 */
export interface VoiceParts {
  speaker: Pick<Speaker, 'audible' | 'paused' | 'pause' | 'resume' | 'interrupt'>;
  room: Pick<BotRoom, 'sendControl'>;
  mode: InterruptionMode;
  telemetry: BotEventSink;
}

export function speakerVoice({ speaker, room, mode, telemetry }: VoiceParts): Omit<BargeInVoice, 'audible'> {
  const interrupt = (): void => {
    speaker.interrupt();
    telemetry({ type: 'interruption', kind: 'barge_in' });
  };
  return {
    stop: () => {
      if (mode === 'pause') return void speaker.pause();
      if (speaker.audible) interrupt();
    },
    settled: (outcome: BargeInOutcome) => {
      if (mode !== 'pause' || !speaker.paused) return;
      if (outcome === 'interruption') return interrupt();
      room.sendControl({ type: 'state', state: 'speaking' });
      speaker.resume();
    },
  };
}
