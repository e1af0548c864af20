import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { floatToPcm16 } from '../../speech/audio.ts';
import { DEFAULT_MODELS_DIR } from '../../speech/config.ts';
import { resolveSpeechModels } from '../../speech/models.ts';
import { wavFromPcm16 } from '../../lib/pcm.ts';

/**
 * Speaks texts with the Piper voice into WAV files, for the test respondents (test/harness/speech.ts
 * runs this as a child process, so the voice's ~260 MB stay out of the test worker). Deterministic:
 * VITS draws noise inside the model, and with both noise scales (next to) 0 and one thread the same text
 * gives the same samples every time. Usage: node piper-say.ts <request.json>, where the file holds
 * [{text, file, speed?}, ...] (speed 1 is the voice's pace, below 1 slower); writes 22.05 kHz mono 16-bit WAV files.
 */
interface SherpaTts {
  generate(request: { text: string; sid: number; speed: number }): { samples: Float32Array; sampleRate: number };
}

/** sherpa-onnx reads a 0 as "unset" and puts the model's default noise back: the smallest non-zero instead. */
const NO_NOISE = 1e-30;

const [requestFile] = process.argv.slice(2);
if (!requestFile) throw new Error('usage: piper-say.ts <request.json>');
const jobs = JSON.parse(await import('node:fs/promises').then((fs) => fs.readFile(requestFile, 'utf8'))) as Array<{
  text: string;
  file: string;
  speed?: number;
}>;
const espeak =
  process.env.SPEECH_ESPEAK_DATA_DIR ??
  join('/usr/lib', process.arch === 'arm64' ? 'aarch64-linux-gnu' : 'x86_64-linux-gnu', 'espeak-ng-data');
const files = resolveSpeechModels(process.env.SPEECH_MODELS_DIR ?? DEFAULT_MODELS_DIR, espeak);
const sherpa = createRequire(import.meta.url)('sherpa-onnx-node') as { OfflineTts: new (config: unknown) => SherpaTts };
const tts = new sherpa.OfflineTts({
  model: {
    vits: {
      model: files.piper.model,
      tokens: files.piper.tokens,
      dataDir: files.piper.dataDir,
      noiseScale: NO_NOISE,
      noiseScaleW: NO_NOISE,
      lengthScale: 1,
    },
    numThreads: 1,
    provider: 'cpu',
    debug: 0,
  },
  maxNumSentences: 1,
});
for (const job of jobs) {
  const audio = tts.generate({ text: job.text, sid: 0, speed: job.speed ?? 1 });
  writeFileSync(job.file, wavFromPcm16(floatToPcm16(audio.samples), audio.sampleRate));
}
