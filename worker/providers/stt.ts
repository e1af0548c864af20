import { toFile } from 'openai';
import { wavFromPcm16 } from '../../lib/pcm.ts';
import { describe, TranscriptionAnswer } from './answers.ts';
import { ProviderError } from './errors.ts';
import { OpenAICompatibleProvider } from './client.ts';
import { callWithPolicy } from './policy.ts';

/** Speech-to-text: one finished utterance of 16-bit PCM in, its text out. */
export interface SpeechToText {
  readonly provider: string;
  readonly model: string;
  transcribe(pcm: Buffer, options: { sampleRate: number; language?: string; signal?: AbortSignal }): Promise<string>;
}

export class OpenAISpeechToText extends OpenAICompatibleProvider implements SpeechToText {
  async transcribe(pcm: Buffer, options: { sampleRate: number; language?: string; signal?: AbortSignal }): Promise<string> {
    const wav = wavFromPcm16(pcm, options.sampleRate);
    const { value, release } = await callWithPolicy(
      'stt',
      this.policy,
      async ({ signal }) => {
        const file = await toFile(wav, 'utterance.wav', { type: 'audio/wav' });
        const result = await this.client.audio.transcriptions.create(
          { file, model: this.model, response_format: 'json', ...(options.language ? { language: options.language } : {}) },
          { signal },
        );
        const answer = TranscriptionAnswer.safeParse(result);
        if (!answer.success)
          throw new ProviderError('stt', 'bad_response', false, `The speech-to-text gave a malformed answer (${describe(answer.error)}).`);
        return answer.data.text.trim();
      },
      options.signal,
    );
    release();
    return value;
  }
}
