import type { Providers } from '../../worker/providers/index.ts';
import type { ChatMessage } from '../../worker/providers/llm.ts';
import type { StreamingSpeechToText } from '../../worker/bot/turns/types.ts';
import { replyByRules, type LlmRule } from './llm-rules.ts';

/**
 * Model providers that answer from a script, on the clock the test controls (every wait is a
 * setTimeout, so fake timers run them in no real time): for unit tests of the interview's stages.
 * Speech-to-text returns the scripted texts in order (with `segments`, a realtime stream whose
 * commits, one per pause, return the scripted segments in order); the language model answers by
 * `rules` on the respondent's words first (llm-rules.ts: e.g. WAIT to words that trail off), else
 * streams the scripted replies in order (`NEXT`, `FOLLOW_UP: ...`, or an Error to throw); speech is
 * silence, `msPerWord` long.
 * The protocol-faithful fakes of the real HTTP APIs are in openai-compatible.ts.
 */
export interface ProviderScript {
  transcripts?: string[];
  /** One per follow-up decision; an Error fails that call. Default `NEXT`. */
  replies?: Array<string | Error>;
  /** Decisions by the respondent's latest words, before `replies` (a rule's call takes no reply). */
  rules?: LlmRule[];
  /** Realtime speech-to-text: each commit's text, in order (absent: no realtime endpoint). */
  segments?: string[];
  summary?: string | Error;
  sttDelayMs?: number;
  /** Before the language model's first token. */
  llmDelayMs?: number;
  /** Between the reply's pieces (12 characters each; default 10). */
  llmPieceMs?: number;
  /** After the last piece, before the stream ends (a provider's final chunk; default 0). */
  llmEndMs?: number;
  ttsFirstByteMs?: number;
  msPerWord?: number;
  /** Fails speech synthesis of any sentence containing this text. */
  ttsFailsOn?: { text: string; error: Error };
}

export interface ScriptedProviders extends Providers {
  /**
   * `ttsAt`, `llmAt` and `llmEndedAt`: the (fake) clock when each synthesis started, each model
   * call started and each stream ended; `llmAborted`: calls whose signal aborted them; `commits`:
   * the realtime stream's commits.
   */
  calls: {
    stt: number;
    llm: ChatMessage[][];
    llmAt: number[];
    llmAborted: number;
    tts: string[];
    ttsAt: number[];
    llmEndedAt: number[];
    warm: number[];
    commits: number;
  };
}

const TTS_RATE = 24_000;
const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function abortable(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('aborted');
}

export function scriptedProviders(script: ProviderScript = {}): ScriptedProviders {
  const transcripts = [...(script.transcripts ?? [])];
  const replies = [...(script.replies ?? [])];
  const segments = script.segments ? [...script.segments] : null;
  const calls: ScriptedProviders['calls'] = {
    stt: 0,
    llm: [],
    llmAt: [],
    llmAborted: 0,
    tts: [],
    ttsAt: [],
    llmEndedAt: [],
    warm: [],
    commits: 0,
  };
  const sttStream: StreamingSpeechToText | null = segments && {
    provider: 'scripted',
    model: 'stt-stream-script',
    openStream: () =>
      Promise.resolve({
        append: () => undefined,
        async commit() {
          calls.commits++;
          const text = segments.shift() ?? '';
          await wait(script.sttDelayMs ?? 50);
          return text;
        },
        clear: () => undefined,
        interim: '',
        close: () => undefined,
      }),
  };
  return {
    calls,
    warm: () => (calls.warm.push(Date.now()), Promise.resolve()),
    stt: {
      provider: 'scripted',
      model: 'stt-script',
      async transcribe(_pcm, options) {
        calls.stt++;
        await wait(script.sttDelayMs ?? 50);
        abortable(options.signal);
        return transcripts.shift() ?? `answer ${calls.stt}`;
      },
    },
    sttStream,
    llm: {
      provider: 'scripted',
      model: 'llm-script',
      async *stream(messages, options = {}) {
        calls.llm.push(messages);
        calls.llmAt.push(Date.now());
        const reply = replyByRules(messages, script.rules ?? []) ?? replies.shift() ?? 'NEXT';
        const aborted = () => {
          if (options.signal?.aborted) calls.llmAborted++;
          abortable(options.signal);
        };
        await wait(script.llmDelayMs ?? 100);
        aborted();
        if (reply instanceof Error) throw reply;
        for (const piece of reply.match(/.{1,12}/gs) ?? []) {
          aborted();
          yield piece;
          await wait(script.llmPieceMs ?? 10);
        }
        if (script.llmEndMs) await wait(script.llmEndMs);
        calls.llmEndedAt.push(Date.now());
      },
      async complete(messages, options = {}) {
        calls.llm.push(messages);
        await wait(script.llmDelayMs ?? 100);
        abortable(options.signal);
        if (script.summary instanceof Error) throw script.summary;
        return script.summary ?? 'Summary: scripted.';
      },
    },
    tts: {
      provider: 'scripted',
      model: 'tts-script',
      sampleRate: TTS_RATE,
      async *synthesize(text, options = {}) {
        calls.tts.push(text);
        calls.ttsAt.push(Date.now());
        await wait(script.ttsFirstByteMs ?? 20);
        abortable(options.signal);
        if (script.ttsFailsOn && text.includes(script.ttsFailsOn.text)) throw script.ttsFailsOn.error;
        const ms = text.split(/\s+/).length * (script.msPerWord ?? 250);
        yield Buffer.alloc(Math.round((TTS_RATE * ms) / 1000) * 2);
      },
    },
  };
}
