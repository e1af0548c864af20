/**
 * The Daily bridge's stdio framing (docs/daily-bridge-protocol.md): one kind byte (`J` JSON, `A`
 * audio), a 4-byte big-endian payload length, the payload. Pure: encoding and an incremental decoder.
 */
export const JSON_FRAME = 0x4a; // 'J'
export const AUDIO_FRAME = 0x41; // 'A'
export const MAX_PAYLOAD = 1 << 20;
const HEADER = 5;

export type Frame = { kind: 'json'; value: unknown } | { kind: 'audio'; pcm: Buffer };

export function encodeJson(value: unknown): Buffer {
  return encode(JSON_FRAME, Buffer.from(JSON.stringify(value), 'utf8'));
}

export function encodeAudio(pcm: Buffer): Buffer {
  return encode(AUDIO_FRAME, pcm);
}

function encode(kind: number, payload: Buffer): Buffer {
  if (payload.length > MAX_PAYLOAD) throw new RangeError(`frame of ${payload.length} bytes exceeds ${MAX_PAYLOAD}`);
  const header = Buffer.alloc(HEADER);
  header[0] = kind;
  header.writeUInt32BE(payload.length, 1);
  return Buffer.concat([header, payload]);
}

/** Feeds arbitrary chunks of a byte stream, yields whole frames; throws on a corrupt stream. */
export class FrameDecoder {
  private pending: Buffer = Buffer.alloc(0);

  *push(chunk: Buffer): Generator<Frame> {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    while (this.pending.length >= HEADER) {
      const kind = this.pending[0];
      const length = this.pending.readUInt32BE(1);
      if (kind !== JSON_FRAME && kind !== AUDIO_FRAME) throw new Error(`unknown frame kind 0x${kind!.toString(16)}`);
      if (length > MAX_PAYLOAD) throw new Error(`frame of ${length} bytes exceeds ${MAX_PAYLOAD}`);
      if (this.pending.length < HEADER + length) return;
      const payload = this.pending.subarray(HEADER, HEADER + length);
      this.pending = this.pending.subarray(HEADER + length);
      if (kind === AUDIO_FRAME) yield { kind: 'audio', pcm: Buffer.from(payload) };
      else yield { kind: 'json', value: JSON.parse(payload.toString('utf8')) as unknown };
    }
  }
}
