import { createRequire } from 'node:module';
import type { SpeechModelFiles } from './models.ts';
import { boundedText, padShort, RECOGNISER_RATE } from './decode-bounds.ts';

/**
 * The two models of one process, loaded once at start through sherpa-onnx-node (prebuilt native
 * binaries; a CommonJS package without types, so the few calls we make are typed here): Moonshine
 * base-en as an OfflineRecognizer and the Piper voice as an OfflineTts. Decoding and synthesis run
 * on libuv's thread pool (the *Async calls), so the event loop keeps serving while a model works.
 * How many run at once is the queue's business (fair-queue.ts), not this file's.
 */
interface SherpaStream {
  acceptWaveform(wave: { samples: Float32Array; sampleRate: number }): void;
}
interface SherpaRecognizer {
  createStream(): SherpaStream;
  decodeAsync(stream: SherpaStream): Promise<{ text: string; tokens: string[] }>;
}
interface SherpaTts {
  readonly sampleRate: number;
  generateAsync(request: { text: string; sid: number; speed: number }): Promise<{ samples: Float32Array; sampleRate: number }>;
}
interface SherpaModule {
  OfflineRecognizer: { createAsync(config: unknown): Promise<SherpaRecognizer> };
  OfflineTts: { createAsync(config: unknown): Promise<SherpaTts> };
}

export interface Transcription {
  text: string;
  /** The decoder ran past what the audio can hold and its text was cut (decode-bounds.ts). */
  truncated: boolean;
}

export interface SpeechEngine {
  /** 16 kHz mono samples in [-1, 1] -> their text. */
  transcribe(samples: Float32Array): Promise<Transcription>;
  /** Text -> mono samples at `voiceRate`; `speed` 1 is the voice's own pace. */
  synthesize(text: string, speed: number): Promise<Float32Array>;
  readonly voiceRate: number;
}

export async function loadSpeechEngine(files: SpeechModelFiles, options: { threads: number }): Promise<SpeechEngine> {
  const sherpa = createRequire(import.meta.url)('sherpa-onnx-node') as SherpaModule;
  const [recognizer, tts] = await Promise.all([
    sherpa.OfflineRecognizer.createAsync({
      featConfig: { sampleRate: RECOGNISER_RATE, featureDim: 80 },
      modelConfig: {
        moonshine: { encoder: files.moonshine.encoder, mergedDecoder: files.moonshine.mergedDecoder },
        tokens: files.moonshine.tokens,
        numThreads: options.threads,
        provider: 'cpu',
        debug: 0,
      },
      decodingMethod: 'greedy_search',
    }),
    sherpa.OfflineTts.createAsync({
      model: {
        vits: { model: files.piper.model, tokens: files.piper.tokens, dataDir: files.piper.dataDir },
        numThreads: options.threads,
        provider: 'cpu',
        debug: 0,
      },
      maxNumSentences: 1,
    }),
  ]);
  return {
    voiceRate: tts.sampleRate,
    async transcribe(samples) {
      const stream = recognizer.createStream();
      stream.acceptWaveform({ samples: padShort(samples), sampleRate: RECOGNISER_RATE });
      const result = await recognizer.decodeAsync(stream);
      return boundedText(result, samples.length / RECOGNISER_RATE);
    },
    async synthesize(text, speed) {
      const audio = await tts.generateAsync({ text, sid: 0, speed });
      return audio.samples;
    },
  };
}
