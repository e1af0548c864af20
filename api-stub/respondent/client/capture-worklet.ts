import { Decimator } from './decimate.ts';

/**
 * AudioWorklet processor: takes the microphone at the context's rate, decimates it to 16 kHz
 * (decimate.ts) and posts 20 ms frames (320 samples of signed 16-bit PCM) to the page.
 * Bundled on its own as /respondent/assets/capture-worklet.js.
 */
declare const sampleRate: number;
declare function registerProcessor(name: string, ctor: unknown): void;
declare class AudioWorkletProcessor {
  readonly port: MessagePort;
}

const FRAME_SAMPLES = 320;

class Pcm16CaptureProcessor extends AudioWorkletProcessor {
  private readonly decimator = new Decimator(sampleRate);
  private frame = new Int16Array(FRAME_SAMPLES);
  private filled = 0;
  private readonly emit = (sample: number): void => {
    this.frame[this.filled++] = sample;
    if (this.filled === FRAME_SAMPLES) {
      this.port.postMessage(this.frame.buffer, [this.frame.buffer]);
      this.frame = new Int16Array(FRAME_SAMPLES);
      this.filled = 0;
    }
  };

  process(inputs: Float32Array[][]): boolean {
    const channel = inputs[0]?.[0];
    if (channel) this.decimator.push(channel, this.emit);
    return true;
  }
}

registerProcessor('pcm16-capture', Pcm16CaptureProcessor);
