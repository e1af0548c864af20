import type { BotRoom } from './room-link.ts';
import { SessionEnd } from './session-end.ts';
import { EnergyVad } from './vad.ts';

/**
 * One respondent turn: collect audio until the VAD hears speech end. Bounded by the idle timeout
 * (no speech at all) and by MAX_UTTERANCE_SECONDS (speech that never pauses), counted both in
 * wall time and in bytes of audio: a respondent sending loud audio faster than real time ends the
 * turn at MAX_UTTERANCE_SECONDS of audio, and nothing past that is kept.
 */
export interface ListenSettings {
  sampleRate: number;
  thresholdDbfs: number;
  silenceMs: number;
  minSpeechMs: number;
  maxUtteranceSeconds: number;
  idleTimeoutSeconds: number;
}

const PREROLL_MS = 200;

/** The most audio one utterance may hold: MAX_UTTERANCE_SECONDS of 16-bit mono PCM. */
export function maxUtteranceBytes(settings: Pick<ListenSettings, 'sampleRate' | 'maxUtteranceSeconds'>): number {
  return settings.maxUtteranceSeconds * settings.sampleRate * 2;
}

export interface ListenOptions {
  signal: AbortSignal;
  extraWaitMs: number;
  /** Called when the turn was ended by the byte bound (the respondent sent too much, too fast). */
  onBound?: () => void;
}

export function listen(room: BotRoom, settings: ListenSettings, options: ListenOptions): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const vad = new EnergyVad(settings);
    const boundBytes = maxUtteranceBytes(settings);
    let speechBytes = 0;
    const prerollBytes = Math.round((settings.sampleRate * PREROLL_MS) / 1000) * 2;
    let preroll: Buffer[] = [];
    let prerollSize = 0;
    let speech: Buffer[] | null = null;
    let maxTimer: NodeJS.Timeout | undefined;
    // The respondent hears the bot's last words for `extraWaitMs` before they can answer.
    const idleTimer = setTimeout(
      () => finish(new SessionEnd('idle_timeout', 'timeout', `The respondent said nothing for ${settings.idleTimeoutSeconds} s.`)),
      settings.idleTimeoutSeconds * 1000 + options.extraWaitMs,
    );

    const onAudio = (pcm: Buffer) => {
      const events = vad.push(pcm);
      if (speech) {
        const left = boundBytes - speechBytes;
        speech.push(pcm.length > left ? pcm.subarray(0, left) : pcm);
        speechBytes += Math.min(pcm.length, left);
        if (speechBytes >= boundBytes) {
          options.onBound?.();
          return finish();
        }
      } else {
        preroll.push(pcm);
        prerollSize += pcm.length;
        while (prerollSize - (preroll[0]?.length ?? 0) >= prerollBytes && preroll.length > 1) prerollSize -= preroll.shift()!.length;
      }
      for (const event of events) {
        if (event === 'speech_start' && !speech) {
          clearTimeout(idleTimer);
          speech = preroll;
          speechBytes = prerollSize;
          preroll = [];
          maxTimer = setTimeout(() => finish(), settings.maxUtteranceSeconds * 1000);
        } else if (event === 'speech_end' && speech) {
          return finish();
        }
      }
    };
    const onAbort = () => finish(options.signal.reason as Error);
    const finish = (err?: Error) => {
      clearTimeout(idleTimer);
      clearTimeout(maxTimer);
      room.off('audio', onAudio);
      options.signal.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else resolve(Buffer.concat(speech ?? []));
    };
    room.on('audio', onAudio);
    options.signal.addEventListener('abort', onAbort, { once: true });
    if (options.signal.aborted) onAbort();
  });
}
