import { EnergyVad } from '../../worker/bot/vad.ts';
import type { AnswerItem } from './answer-set.ts';

/**
 * CPU per live session of the turn-taking models, measured in this process: the answer set fed
 * frame by frame as the bot receives it, process.cpuUsage() (all threads) divided by the seconds
 * of audio = the share of one core a session keeps busy.
 */
const audioSeconds = (items: readonly AnswerItem[]): number => items.reduce((s, i) => s + i.pcm.length / 2 / 16_000, 0);

function cpuSeconds(run: () => void): number {
  const before = process.cpuUsage();
  run();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1e6;
}

/** Today's energy VAD (20 ms windows), the default settings. */
export function energyVadShare(items: readonly AnswerItem[]): number {
  const frameBytes = 640;
  const feed = () => {
    const vad = new EnergyVad({ sampleRate: 16_000, thresholdDbfs: -45, silenceMs: 700, minSpeechMs: 120 });
    for (const item of items) for (let i = 0; i < item.pcm.length; i += frameBytes) vad.push(item.pcm.subarray(i, i + frameBytes));
  };
  feed(); // warm-up: JIT
  return cpuSeconds(feed) / audioSeconds(items);
}
