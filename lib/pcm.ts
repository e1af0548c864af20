/**
 * 16-bit little-endian mono PCM and its WAV container: the audio format of local rooms
 * (docs/local-room-protocol.md), of speech-to-text uploads, and of the test microphone.
 * Shared by the worker, the fakes and the test harnesses.
 */

export interface DecodedWav {
  pcm: Buffer;
  sampleRate: number;
  channels: number;
}

/** Wraps PCM16 mono samples in a 44-byte RIFF/WAVE header. */
export function wavFromPcm16(pcm: Buffer, sampleRate: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + pcm.length, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16); // PCM fmt chunk size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28); // byte rate
  header.writeUInt16LE(2, 32); // block align
  header.writeUInt16LE(16, 34); // bits per sample
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([header, pcm]);
}

/** The samples of a 16-bit PCM WAV, walking its chunks (no assumption on header size). */
export function parseWav(wav: Buffer): DecodedWav {
  if (wav.length < 12 || wav.toString('ascii', 0, 4) !== 'RIFF' || wav.toString('ascii', 8, 12) !== 'WAVE')
    throw new Error('not a WAV file');
  let offset = 12;
  let sampleRate = 0;
  let channels = 0;
  while (offset + 8 <= wav.length) {
    const id = wav.toString('ascii', offset, offset + 4);
    const size = wav.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ') {
      channels = wav.readUInt16LE(body + 2);
      sampleRate = wav.readUInt32LE(body + 4);
      if (wav.readUInt16LE(body + 14) !== 16) throw new Error('WAV is not 16-bit PCM');
    } else if (id === 'data') {
      // A writer streaming to a pipe (espeak-ng --stdout) cannot know the size and leaves 0xFFFFFFFF.
      const end = size === 0xffffffff || body + size > wav.length ? wav.length : body + size;
      return { pcm: wav.subarray(body, end - ((end - body) % 2)), sampleRate, channels };
    }
    offset = body + size + (size % 2);
  }
  throw new Error('WAV has no data chunk');
}

export function silencePcm(ms: number, sampleRate: number): Buffer {
  return Buffer.alloc(Math.round((sampleRate * ms) / 1000) * 2);
}

/** Linear-interpolation resampling of PCM16 mono. */
export function resamplePcm16(pcm: Buffer, from: number, to: number): Buffer {
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
