import { ChatCompletionAnswer, ChatCompletionChunk, describe, MAX_REPLY_CHARS } from './answers.ts';
import { ProviderError } from './errors.ts';
import { OpenAICompatibleProvider } from './client.ts';
import { callWithPolicy } from './policy.ts';

/** The language model: a chat, streamed token by token, or completed in one answer. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface LanguageModel {
  readonly provider: string;
  readonly model: string;
  /** Yields text deltas. A failure before the first delta is retried by the policy; after, it is final. */
  stream(messages: ChatMessage[], options?: { signal?: AbortSignal; maxTokens?: number }): AsyncIterable<string>;
  complete(messages: ChatMessage[], options?: { signal?: AbortSignal; maxTokens?: number }): Promise<string>;
}

export class OpenAILanguageModel extends OpenAICompatibleProvider implements LanguageModel {
  async *stream(messages: ChatMessage[], options: { signal?: AbortSignal; maxTokens?: number } = {}): AsyncIterable<string> {
    const { value, attempt, release } = await callWithPolicy(
      'llm',
      this.policy,
      async ({ signal }) => {
        const stream = await this.client.chat.completions.create(
          { model: this.model, messages, stream: true, ...(options.maxTokens ? { max_tokens: options.maxTokens } : {}) },
          { signal },
        );
        const iterator = stream[Symbol.asyncIterator]();
        const first = await iterator.next(); // the first chunk proves the stream is alive
        return { iterator, first };
      },
      options.signal,
    );
    try {
      let next = value.first;
      let length = 0;
      while (!next.done) {
        // Each chunk checked before it is read (answers.ts); a reply past any turn's length is a fault too.
        const chunk = ChatCompletionChunk.safeParse(next.value);
        if (!chunk.success)
          throw new ProviderError('llm', 'bad_response', false, `The language model sent a malformed chunk (${describe(chunk.error)}).`);
        const delta = chunk.data.choices[0]?.delta?.content;
        length += delta?.length ?? 0;
        if (length > MAX_REPLY_CHARS)
          throw new ProviderError('llm', 'bad_response', false, `The language model's reply ran past ${MAX_REPLY_CHARS} characters.`);
        if (delta) yield delta;
        next = await value.iterator.next();
      }
    } catch (err) {
      if (err instanceof ProviderError) throw err;
      if (err instanceof SyntaxError)
        throw new ProviderError('llm', 'bad_response', false, 'The language model sent a chunk that is not JSON.');
      if (attempt.timedOut())
        throw new ProviderError('llm', 'timeout', false, `The language model did not finish within ${this.policy.timeoutMs / 1000} s.`);
      if (options.signal?.aborted) throw new ProviderError('llm', 'aborted', false, 'The language model call was cancelled.');
      throw new ProviderError('llm', 'network', false, `The language model stream broke: ${(err as Error).name}.`);
    } finally {
      release();
    }
  }

  async complete(messages: ChatMessage[], options: { signal?: AbortSignal; maxTokens?: number } = {}): Promise<string> {
    const { value, release } = await callWithPolicy(
      'llm',
      this.policy,
      async ({ signal }) => {
        const res = await this.client.chat.completions.create(
          { model: this.model, messages, ...(options.maxTokens ? { max_tokens: options.maxTokens } : {}) },
          { signal },
        );
        const answer = ChatCompletionAnswer.safeParse(res);
        if (!answer.success)
          throw new ProviderError('llm', 'bad_response', false, `The language model gave a malformed answer (${describe(answer.error)}).`);
        return answer.data.choices[0]!.message.content;
      },
      options.signal,
    );
    release();
    return value;
  }
}
