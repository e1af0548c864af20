import { spawnSync } from 'node:child_process';
import { parseWav, resamplePcm16, silencePcm, wavFromPcm16 } from '../../lib/pcm.ts';

// Re-exported for the fakes' users, so that a test needs one import for its audio.
export { parseWav, silencePcm, wavFromPcm16 };

/**
 * Audio for fakes and test clients: real speech from espeak-ng (Debian package, installed by
 * scripts/bootstrap.sh) or plain tones, as 16-bit mono PCM at any rate, plus WAV wrapping.
 */
const cache = new Map<string, Buffer>();

export function hasEspeak(): boolean {
  return spawnSync('sh', ['-c', 'command -v espeak-ng'], { encoding: 'utf8' }).stdout.trim() !== '';
}

/** Spoken `text` from espeak-ng, as PCM at `sampleRate`. Throws if espeak-ng is missing. */
export function speechPcm(text: string, sampleRate: number): Buffer {
  const key = `${sampleRate}:${text}`;
  const hit = cache.get(key);
  if (hit) return hit;
  // Every setting fixed (espeak-ng's defaults, spelled out) and resampled in JS: the same text is the same samples.
  const result = spawnSync('espeak-ng', ['--stdout', '-v', 'en', '-s', '190', '-p', '50', '-a', '100', '-g', '0', text], {
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error || result.status !== 0) throw new Error(`espeak-ng failed: ${result.error?.message ?? result.stderr?.toString()}`);
  const { pcm, sampleRate: rate } = parseWav(result.stdout);
  const out = resamplePcm16(pcm, rate, sampleRate);
  cache.set(key, out);
  return out;
}

/** A sine tone: audible, and loud enough for any energy VAD. */
export function tonePcm(ms: number, sampleRate: number, hz = 440, amplitude = 0.3): Buffer {
  const samples = Math.round((sampleRate * ms) / 1000);
  const out = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) out.writeInt16LE(Math.round(Math.sin((2 * Math.PI * hz * i) / sampleRate) * amplitude * 32767), i * 2);
  return out;
}
