/**
 * A real recogniser behind the OpenAI stand-in: the stand-in forwards each transcription (a batch
 * upload, or one realtime commit's audio as a WAV) to an OpenAI-compatible batch endpoint, in
 * practice the self-hosted speech server (speech/, test/harness/speech-server.ts), and answers
 * with what it heard. The stand-in keeps its failure injection and latency profiles around it:
 * a profile's figure becomes the earliest time the transcript may arrive (earliestAfter), so a
 * provider's latency is modelled once instead of being added on top of the real decode.
 */
export interface UpstreamRecogniserOptions {
  /** OpenAI-compatible base URL, e.g. http://127.0.0.1:41234/v1. */
  url: string;
  /** Its bearer token. */
  token: string;
  /** The model name sent (the speech server accepts any). */
  model?: string;
}

export type Recognise = (wav: Buffer) => Promise<string>;

export class UpstreamRecogniserError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = 'UpstreamRecogniserError';
    this.status = status;
  }
}

export function upstreamRecogniser(options: UpstreamRecogniserOptions): Recognise {
  const endpoint = `${options.url.replace(/\/+$/, '')}/audio/transcriptions`;
  return async (wav) => {
    const form = new FormData();
    form.set('model', options.model ?? 'self-hosted');
    form.set('file', new Blob([new Uint8Array(wav)], { type: 'audio/wav' }), 'answer.wav');
    const res = await fetch(endpoint, { method: 'POST', headers: { authorization: `Bearer ${options.token}` }, body: form });
    const body = await res.text();
    if (!res.ok) throw new UpstreamRecogniserError(res.status, `the upstream recogniser answered ${res.status}: ${body.slice(0, 300)}`);
    const text = (JSON.parse(body) as { text?: unknown }).text;
    if (typeof text !== 'string')
      throw new UpstreamRecogniserError(502, `the upstream recogniser's answer has no text: ${body.slice(0, 300)}`);
    return text;
  };
}

/** Waits until `earliestMs` after `startedAt` (performance.now()), if that is still ahead. */
export async function earliestAfter(startedAt: number, earliestMs: number): Promise<void> {
  const left = startedAt + earliestMs - performance.now();
  if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
}
