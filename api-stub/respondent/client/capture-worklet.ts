/**
 * AudioWorklet processor: takes the microphone at the context's rate, low-passes and decimates it
 * to 16 kHz by averaging each output sample's window ("integrate and dump", good enough for speech),
 * converts to signed 16-bit PCM and posts 20 ms frames (320 samples) to the page.
 * Bundled on its own as /respondent/assets/capture-worklet.js.
 */
declare const sampleRate: number;
declare function registerProcessor(name: string, ctor: unknown): void;
declare class AudioWorkletProcessor {
  readonly port: MessagePort;
}

const TARGET_RATE = 16_000;
const FRAME_SAMPLES = 320;

class Pcm16CaptureProcessor extends AudioWorkletProcessor {
  private readonly step = sampleRate / TARGET_RATE;
  private position = 0; // input samples consumed toward the next output sample
  private sum = 0;
  private count = 0;
  private frame = new Int16Array(FRAME_SAMPLES);
  private filled = 0;

  process(inputs: Float32Array[][]): boolean {
    const channel = inputs[0]?.[0];
    if (!channel) return true;
    for (let i = 0; i < channel.length; i++) {
      this.sum += channel[i] ?? 0;
      this.count += 1;
      this.position += 1;
      // An input rate below 16 kHz repeats samples; above, each output averages its window.
      while (this.position >= this.step) {
        this.position -= this.step;
        this.push(this.count > 0 ? this.sum / this.count : 0);
        if (this.position < this.step) {
          this.sum = 0;
          this.count = 0;
        }
      }
    }
    return true;
  }

  private push(value: number): void {
    const clamped = Math.max(-1, Math.min(1, value));
    this.frame[this.filled++] = clamped < 0 ? clamped * 0x8000 : clamped * 0x7fff;
    if (this.filled === FRAME_SAMPLES) {
      this.port.postMessage(this.frame.buffer, [this.frame.buffer]);
      this.frame = new Int16Array(FRAME_SAMPLES);
      this.filled = 0;
    }
  }
}

registerProcessor('pcm16-capture', Pcm16CaptureProcessor);
