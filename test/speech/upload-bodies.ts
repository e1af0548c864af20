/**
 * Upload bodies for the speech server's transcription route, built by hand so that a test controls
 * every byte: a WAV file of any channel count, rate and format tag, and the multipart form around it.
 */
export function waveFile(options: { seconds: number; rate: number; channels: number; formatTag?: number }): Buffer {
  const { seconds, rate, channels, formatTag = 1 } = options;
  const frames = Math.round(seconds * rate);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + frames * channels * 2, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(formatTag, 20);
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * channels * 2, 28);
  header.writeUInt16LE(channels * 2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(frames * channels * 2, 40);
  // A quiet 220 Hz hum on every channel: the bytes of a real recording, not a run of zeros.
  const pcm = Buffer.alloc(frames * channels * 2);
  for (let f = 0; f < frames; f++) {
    const sample = Math.round(800 * Math.sin((2 * Math.PI * 220 * f) / rate));
    for (let c = 0; c < channels; c++) pcm.writeInt16LE(sample, (f * channels + c) * 2);
  }
  return Buffer.concat([header, pcm]);
}

const BOUNDARY = 'speech-test-boundary-7d1f';

/** A multipart/form-data body with `model` and `file`, and the headers that declare it. */
export function multipartWav(file: Buffer): { body: Buffer; headers: Record<string, string> } {
  const body = Buffer.concat([
    Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; ` +
        `name="model"\r\n\r\nwhisper-1\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; ` +
        `filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n`,
    ),
    file,
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ]);
  return { body, headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': String(body.length) } };
}
