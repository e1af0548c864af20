import { resamplePcm16 } from '../../lib/pcm.ts';

/**
 * Records both sides of an interview as a respondent's client has them, for a person to listen to
 * (the demo writes it beside the transcript): what the respondent's microphone sent and what the
 * bot's voice delivered, each placed at the time it was sent or received, as a stereo WAV at
 * 24 kHz (left: the respondent, right: the bot). Audio that arrives in bursts (faster than real
 * time) or with a little jitter is laid end to end rather than overlapped or gapped.
 */
export type Side = 'respondent' | 'bot';

const RATE = 24_000;
/** A chunk that starts within this much of where the side's last one ended continues it. */
const CONTINUE_MS = 120;

export interface SideSummary {
  /** Seconds of the side's channel louder than -40 dBFS, in 100 ms windows. */
  soundSeconds: number;
}

export class ConversationRecorder {
  private readonly startedAt: number;
  private readonly chunks: Record<Side, Array<{ at: number; pcm: Buffer }>> = { respondent: [], bot: [] };
  private readonly cursor: Record<Side, number> = { respondent: 0, bot: 0 };

  /** `startedAt`: the performance.now() that is second 0 of the recording. */
  constructor(startedAt = performance.now()) {
    this.startedAt = startedAt;
  }

  /** PCM16 mono of one side at `sampleRate`, sent or received at `at` (performance.now()). */
  hear(side: Side, pcm: Buffer, sampleRate: number, at = performance.now()): void {
    if (pcm.length < 2) return;
    const samples = sampleRate === RATE ? pcm : resamplePcm16(pcm, sampleRate, RATE);
    const arrived = Math.max(0, Math.round(((at - this.startedAt) / 1000) * RATE));
    const start = arrived < this.cursor[side] + (CONTINUE_MS / 1000) * RATE ? this.cursor[side] : arrived;
    this.chunks[side].push({ at: start, pcm: samples });
    this.cursor[side] = start + samples.length / 2;
  }

  /** The samples of one side, from second 0 to `length` samples. */
  private channel(side: Side, length: number): Int16Array {
    const out = new Int16Array(length);
    for (const { at, pcm } of this.chunks[side]) {
      for (let i = 0; i < pcm.length / 2 && at + i < length; i++) out[at + i] = pcm.readInt16LE(i * 2);
    }
    return out;
  }

  private length(): number {
    return Math.max(this.cursor.respondent, this.cursor.bot);
  }

  /** The conversation as a 16-bit stereo WAV: left the respondent, right the bot. */
  wav(): Buffer {
    const length = this.length();
    const left = this.channel('respondent', length);
    const right = this.channel('bot', length);
    const data = Buffer.alloc(length * 4);
    for (let i = 0; i < length; i++) {
      data.writeInt16LE(left[i]!, i * 4);
      data.writeInt16LE(right[i]!, i * 4 + 2);
    }
    const header = Buffer.alloc(44);
    header.write('RIFF', 0, 'ascii');
    header.writeUInt32LE(36 + data.length, 4);
    header.write('WAVE', 8, 'ascii');
    header.write('fmt ', 12, 'ascii');
    header.writeUInt32LE(16, 16);
    header.writeUInt16LE(1, 20); // PCM
    header.writeUInt16LE(2, 22); // stereo
    header.writeUInt32LE(RATE, 24);
    header.writeUInt32LE(RATE * 4, 28); // byte rate
    header.writeUInt16LE(4, 32); // block align
    header.writeUInt16LE(16, 34);
    header.write('data', 36, 'ascii');
    header.writeUInt32LE(data.length, 40);
    return Buffer.concat([header, data]);
  }

  /** How long the recording is, and how much of each side is sound. */
  summary(): { seconds: number } & Record<Side, SideSummary> {
    const length = this.length();
    const window = RATE / 10;
    const sound = (side: Side): number => {
      const samples = this.channel(side, length);
      let loud = 0;
      for (let w = 0; w + window <= length; w += window) {
        let sum = 0;
        for (let i = w; i < w + window; i++) sum += samples[i]! * samples[i]!;
        if (20 * Math.log10(Math.sqrt(sum / window) / 32768 + 1e-12) > -40) loud++;
      }
      return loud / 10;
    };
    return { seconds: length / RATE, respondent: { soundSeconds: sound('respondent') }, bot: { soundSeconds: sound('bot') } };
  }
}
