import { levelDbfs } from './audio.ts';

/**
 * Energy-based voice-activity detection on 16-bit mono PCM, in 20 ms windows. Speech starts after
 * `minSpeechMs` of windows above the threshold, and ends after `silenceMs` below it. Pure: the
 * caller feeds audio and gets events, so turn taking can be tested without sockets.
 */
export interface VadOptions {
  sampleRate: number;
  thresholdDbfs: number;
  silenceMs: number;
  minSpeechMs: number;
  windowMs?: number;
}

export type VadEvent = 'speech_start' | 'speech_end';

export class EnergyVad {
  private readonly windowBytes: number;
  private readonly windowMs: number;
  private carry = Buffer.alloc(0);
  private voicedRun = 0;
  private silentRun = 0;
  private speaking = false;

  private readonly options: VadOptions;

  constructor(options: VadOptions) {
    this.options = options;
    this.windowMs = options.windowMs ?? 20;
    this.windowBytes = Math.round((options.sampleRate * this.windowMs) / 1000) * 2;
  }

  get inSpeech(): boolean {
    return this.speaking;
  }

  /** Feeds audio; returns the events it caused, in order. */
  push(pcm: Buffer): VadEvent[] {
    const events: VadEvent[] = [];
    let data = this.carry.length ? Buffer.concat([this.carry, pcm]) : pcm;
    let offset = 0;
    while (data.length - offset >= this.windowBytes) {
      const voiced = levelDbfs(data, offset, this.windowBytes) >= this.options.thresholdDbfs;
      offset += this.windowBytes;
      if (voiced) {
        this.voicedRun += this.windowMs;
        this.silentRun = 0;
        if (!this.speaking && this.voicedRun >= this.options.minSpeechMs) {
          this.speaking = true;
          events.push('speech_start');
        }
      } else {
        this.voicedRun = 0;
        if (this.speaking) {
          this.silentRun += this.windowMs;
          if (this.silentRun >= this.options.silenceMs) {
            this.speaking = false;
            this.silentRun = 0;
            events.push('speech_end');
          }
        }
      }
    }
    data = data.subarray(offset);
    this.carry = Buffer.from(data);
    return events;
  }

  reset(): void {
    this.carry = Buffer.alloc(0);
    this.voicedRun = 0;
    this.silentRun = 0;
    this.speaking = false;
  }
}
