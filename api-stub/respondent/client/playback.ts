/**
 * Plays signed 16-bit mono PCM as it streams: each chunk becomes an AudioBuffer at the stream's
 * rate (the context resamples) scheduled right after the previous one, so chunks play gap-free.
 * A small lead on the first chunk absorbs network jitter.
 */
const START_LEAD_SECONDS = 0.05;

export class PcmPlayer {
  private nextStart = 0;
  private readonly sources = new Set<AudioBufferSourceNode>();
  private readonly context: AudioContext;

  constructor(context: AudioContext) {
    this.context = context;
  }

  /** Queues one chunk of little-endian PCM16. */
  push(chunk: ArrayBuffer, sampleRate: number): void {
    const samples = Math.floor(chunk.byteLength / 2);
    if (samples === 0) return;
    const view = new DataView(chunk, 0, samples * 2);
    const buffer = this.context.createBuffer(1, samples, sampleRate);
    const data = buffer.getChannelData(0);
    for (let i = 0; i < samples; i++) data[i] = view.getInt16(i * 2, true) / 0x8000;
    const source = this.context.createBufferSource();
    source.buffer = buffer;
    source.connect(this.context.destination);
    const now = this.context.currentTime;
    if (this.nextStart < now) this.nextStart = now + START_LEAD_SECONDS;
    source.start(this.nextStart);
    this.nextStart += buffer.duration;
    this.sources.add(source);
    source.onended = () => this.sources.delete(source);
  }

  /** Seconds of audio still queued. */
  get queuedSeconds(): number {
    return Math.max(0, this.nextStart - this.context.currentTime);
  }

  stop(): void {
    for (const source of this.sources) {
      try {
        source.stop();
      } catch {
        // Already stopped.
      }
    }
    this.sources.clear();
    this.nextStart = 0;
  }
}
