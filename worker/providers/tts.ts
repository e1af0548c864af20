import { maxSpeechBytes, SpeechContentType } from './answers.ts';
import { ProviderError } from './errors.ts';
import { OpenAICompatibleProvider, type OpenAIProviderOptions } from './client.ts';
import { callWithPolicy } from './policy.ts';

/** Text-to-speech: text in, 16-bit mono PCM at `sampleRate` out, streamed as it is produced. */
export interface TextToSpeech {
  readonly provider: string;
  readonly model: string;
  readonly sampleRate: number;
  synthesize(text: string, options?: { signal?: AbortSignal }): AsyncIterable<Buffer>;
}

export class OpenAITextToSpeech extends OpenAICompatibleProvider implements TextToSpeech {
  /** `pcm` from the OpenAI speech endpoint is 24 kHz, 16-bit, mono, little-endian. */
  readonly sampleRate = 24_000;
  private readonly voice: string;

  constructor(options: OpenAIProviderOptions & { voice: string }) {
    super(options);
    this.voice = options.voice;
  }

  async *synthesize(text: string, options: { signal?: AbortSignal } = {}): AsyncIterable<Buffer> {
    const { value, attempt, release } = await callWithPolicy(
      'tts',
      this.policy,
      async ({ signal }) => {
        const res = await this.client.audio.speech.create(
          { model: this.model, voice: this.voice, input: text, response_format: 'pcm' },
          { signal },
        );
        if (!res.body) throw new ProviderError('tts', 'bad_response', false, 'The text-to-speech answer has no body.');
        const type = SpeechContentType.safeParse(res.headers.get('content-type') ?? '');
        if (!type.success) throw new ProviderError('tts', 'bad_response', false, 'The text-to-speech answered with text, not audio.');
        const reader = res.body.getReader();
        const first = await reader.read(); // retried until the first byte; after that a failure is final
        return { reader, first };
      },
      options.signal,
    );
    // PCM16 is read in whole samples: an odd byte waits for its partner in the next chunk. A body
    // far longer than the sentence could sound is a fault, not speech to play for minutes.
    const limit = maxSpeechBytes(text, this.sampleRate);
    let total = 0;
    let carry: Buffer | null = null;
    try {
      let next = value.first;
      while (!next.done) {
        if (next.value && next.value.byteLength > 0) {
          total += next.value.byteLength;
          if (total > limit)
            throw new ProviderError(
              'tts',
              'bad_response',
              false,
              `The text-to-speech sent more audio than the text could take (over ${Math.round(limit / 2 / this.sampleRate)} s).`,
            );
          const bytes: Buffer = carry ? Buffer.concat([carry, next.value]) : Buffer.from(next.value);
          const even = bytes.length - (bytes.length % 2);
          carry = even < bytes.length ? bytes.subarray(even) : null;
          if (even > 0) yield bytes.subarray(0, even);
        }
        next = await value.reader.read();
      }
    } catch (err) {
      if (err instanceof ProviderError) throw err;
      if (attempt.timedOut())
        throw new ProviderError('tts', 'timeout', false, `The text-to-speech did not finish within ${this.policy.timeoutMs / 1000} s.`);
      if (options.signal?.aborted) throw new ProviderError('tts', 'aborted', false, 'The text-to-speech call was cancelled.');
      throw new ProviderError('tts', 'network', false, 'The text-to-speech stream broke.');
    } finally {
      release();
      value.reader.releaseLock();
    }
  }
}
