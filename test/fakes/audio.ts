import { spawnSync } from 'node:child_process';

/**
 * Audio for fakes and test clients: real speech from espeak-ng (Debian package, installed by
 * scripts/bootstrap.sh) or plain tones, as 16-bit mono PCM at any rate, plus WAV wrapping.
 */
const cache = new Map<string, Buffer>();

export function hasEspeak(): boolean {
  return spawnSync('sh', ['-c', 'command -v espeak-ng'], { encoding: 'utf8' }).stdout.trim() !== '';
}

/** The PCM samples of a 16-bit mono WAV (the `data` chunk), and its rate. */
export function parseWav(wav: Buffer): { pcm: Buffer; sampleRate: number } {
  if (wav.toString('ascii', 0, 4) !== 'RIFF' || wav.toString('ascii', 8, 12) !== 'WAVE') throw new Error('not a WAV file');
  let offset = 12;
  let sampleRate = 0;
  while (offset + 8 <= wav.length) {
    const id = wav.toString('ascii', offset, offset + 4);
    const size = wav.readUInt32LE(offset + 4);
    if (id === 'fmt ') sampleRate = wav.readUInt32LE(offset + 12);
    if (id === 'data') {
      // espeak-ng writing to a pipe cannot know the size and leaves 0xFFFFFFFF: take the rest.
      const end = size === 0xffffffff || offset + 8 + size > wav.length ? wav.length : offset + 8 + size;
      return { pcm: wav.subarray(offset + 8, end - ((end - offset - 8) % 2)), sampleRate };
    }
    offset += 8 + size + (size % 2);
  }
  throw new Error('WAV has no data chunk');
}

/** Linear-interpolation resampling of 16-bit mono PCM. */
export function resample(pcm: Buffer, from: number, to: number): Buffer {
  if (from === to) return pcm;
  const inSamples = pcm.length / 2;
  const outSamples = Math.floor((inSamples * to) / from);
  const out = Buffer.alloc(outSamples * 2);
  for (let i = 0; i < outSamples; i++) {
    const pos = (i * from) / to;
    const j = Math.floor(pos);
    const frac = pos - j;
    const a = pcm.readInt16LE(Math.min(j, inSamples - 1) * 2);
    const b = pcm.readInt16LE(Math.min(j + 1, inSamples - 1) * 2);
    out.writeInt16LE(Math.round(a + (b - a) * frac), i * 2);
  }
  return out;
}

/** Spoken `text` from espeak-ng, as PCM at `sampleRate`. Throws if espeak-ng is missing. */
export function speechPcm(text: string, sampleRate: number): Buffer {
  const key = `${sampleRate}:${text}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const result = spawnSync('espeak-ng', ['--stdout', '-s', '190', text], { maxBuffer: 64 * 1024 * 1024 });
  if (result.error || result.status !== 0) throw new Error(`espeak-ng failed: ${result.error?.message ?? result.stderr?.toString()}`);
  const { pcm, sampleRate: rate } = parseWav(result.stdout);
  const out = resample(pcm, rate, sampleRate);
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

export function silencePcm(ms: number, sampleRate: number): Buffer {
  return Buffer.alloc(Math.round((sampleRate * ms) / 1000) * 2);
}

export function wav(pcm: Buffer, sampleRate: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + pcm.length, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([header, pcm]);
}
