import { parseWav, resamplePcm16 } from '../lib/pcm.ts';
import { SpeechError } from './errors.ts';
import { RECOGNISER_RATE } from './decode-bounds.ts';

/**
 * Audio in and out of the speech server. Uploads are 16-bit PCM WAV (what the bot sends; other
 * containers are refused with a clear error rather than guessed at), mono or interleaved
 * channels (averaged), at 8-48 kHz, resampled to the recogniser's 16 kHz.
 */
export const MIN_INPUT_RATE = 8000;
export const MAX_INPUT_RATE = 48_000;

export function pcm16ToFloat(pcm: Buffer): Float32Array {
  const n = pcm.length >> 1;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = pcm.readInt16LE(i * 2) / 32768;
  return out;
}

export function floatToPcm16(samples: Float32Array): Buffer {
  const out = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++) {
    const s = Math.max(-1, Math.min(1, samples[i]!));
    out.writeInt16LE(Math.round(s * 32767), i * 2);
  }
  return out;
}

function downmix(pcm: Buffer, channels: number): Buffer {
  if (channels === 1) return pcm;
  const frames = Math.floor(pcm.length / 2 / channels);
  const out = Buffer.alloc(frames * 2);
  for (let f = 0; f < frames; f++) {
    let sum = 0;
    for (let c = 0; c < channels; c++) sum += pcm.readInt16LE((f * channels + c) * 2);
    out.writeInt16LE(Math.round(sum / channels), f * 2);
  }
  return out;
}

const PCM_FORMAT = 1;
const FORMAT_NAMES: Record<number, string> = {
  2: 'ADPCM',
  3: 'IEEE float',
  6: 'A-law',
  7: 'mu-law',
  0x50: 'MPEG',
  0x55: 'MP3',
  0xfffe: 'extensible',
};

/** The format tag of the WAV file's fmt chunk (1 is integer PCM), or null when it has none before its data. */
export function wavFormatTag(wav: Buffer): number | null {
  if (wav.length < 12 || wav.toString('ascii', 0, 4) !== 'RIFF' || wav.toString('ascii', 8, 12) !== 'WAVE') return null;
  for (let offset = 12; offset + 8 <= wav.length;) {
    const id = wav.toString('ascii', offset, offset + 4);
    const size = wav.readUInt32LE(offset + 4);
    if (id === 'fmt ') return offset + 10 <= wav.length ? wav.readUInt16LE(offset + 8) : null;
    if (id === 'data') return null;
    offset += 8 + size + (size % 2);
  }
  return null;
}

/** An uploaded file's speech as 16 kHz samples, or a SpeechError saying what is wrong with it. */
export function decodeUpload(file: Buffer, maxSeconds: number): { samples: Float32Array; seconds: number } {
  const tag = wavFormatTag(file);
  if (tag !== null && tag !== PCM_FORMAT) {
    // Its bytes are not 16-bit integer samples, whatever its bits-per-sample field says: refused, never guessed at.
    const name = FORMAT_NAMES[tag] ?? `format tag 0x${tag.toString(16)}`;
    throw new SpeechError(400, 'invalid_audio', `The WAV file holds ${name} audio; send 16-bit integer PCM WAV (format tag 1).`, {
      param: 'file',
    });
  }
  let wav;
  try {
    wav = parseWav(file);
  } catch (err) {
    throw new SpeechError(400, 'invalid_audio', `The audio file could not be decoded (${(err as Error).message}); send 16-bit PCM WAV.`, {
      param: 'file',
    });
  }
  if (wav.channels < 1 || wav.channels > 8)
    throw new SpeechError(400, 'invalid_audio', `The WAV file has ${wav.channels} channels; send mono (or up to 8 channels).`, {
      param: 'file',
    });
  if (wav.sampleRate < MIN_INPUT_RATE || wav.sampleRate > MAX_INPUT_RATE) {
    throw new SpeechError(
      400,
      'invalid_audio',
      `The WAV file's sample rate is ${wav.sampleRate} Hz; send ${MIN_INPUT_RATE}-${MAX_INPUT_RATE} Hz (16 kHz is best).`,
      { param: 'file' },
    );
  }
  const mono = downmix(wav.pcm, wav.channels);
  const seconds = mono.length / 2 / wav.sampleRate;
  if (seconds === 0) throw new SpeechError(400, 'audio_empty', 'The audio file holds no samples.', { param: 'file' });
  if (seconds > maxSeconds)
    throw new SpeechError(
      400,
      'audio_too_long',
      `The audio is ${seconds.toFixed(1)} s long; this server takes at most ${maxSeconds} s per request. Split it.`,
      { param: 'file' },
    );
  return { samples: pcm16ToFloat(resamplePcm16(mono, wav.sampleRate, RECOGNISER_RATE)), seconds };
}
