import { createLogger, type Logger } from '../../lib/log.ts';
import type { StreamingSpeechToText } from '../bot/turns/types.ts';
import type { TurnSettings, WorkerConfig } from '../config.ts';
import { openaiClient, providerName, type OpenAIProviderOptions } from './client.ts';
import type { CallPolicy } from './policy.ts';
import { OpenAILanguageModel, type LanguageModel } from './llm.ts';
import { OpenAIRealtimeSpeechToText } from './realtime-stt.ts';
import { OpenAISpeechToText, type SpeechToText } from './stt.ts';
import { OpenAITextToSpeech, type TextToSpeech } from './tts.ts';

export interface Providers {
  stt: SpeechToText;
  /** Realtime transcription (STT_MODE=realtime), else null; `stt` is its per-turn fallback. */
  sttStream: StreamingSpeechToText | null;
  llm: LanguageModel;
  tts: TextToSpeech;
}

const endpointOptions = (endpoint: WorkerConfig['llm'], policy: CallPolicy): OpenAIProviderOptions => ({
  client: openaiClient(endpoint),
  model: endpoint.model,
  provider: providerName(endpoint.baseURL),
  policy,
});

type ProviderConfig = Pick<WorkerConfig, 'stt' | 'llm' | 'tts' | 'providerTimeoutMs' | 'providerRetries'> & {
  /** Without it (older callers), speech-to-text is batch only. */
  turns?: Pick<TurnSettings, 'sttMode' | 'sttRealtimeModel'>;
};

/** The default providers: OpenAI-compatible APIs at the configured base URLs. */
export function createProviders(config: ProviderConfig, options: { logger?: Logger } = {}): Providers {
  const policy = { timeoutMs: config.providerTimeoutMs, retries: config.providerRetries };
  const sttStream = config.turns?.sttMode === 'realtime'
    ? new OpenAIRealtimeSpeechToText({
        baseURL: config.stt.baseURL,
        apiKey: config.stt.apiKey,
        model: config.turns.sttRealtimeModel,
        provider: providerName(config.stt.baseURL),
        policy,
        // The fallback to batch is logged once per process (the bot's stdout reaches the worker's log).
        logger: options.logger ?? createLogger({ name: 'providers' }),
      })
    : null;
  return {
    stt: new OpenAISpeechToText(endpointOptions(config.stt, policy)),
    sttStream,
    llm: new OpenAILanguageModel(endpointOptions(config.llm, policy)),
    tts: new OpenAITextToSpeech({ ...endpointOptions(config.tts, policy), voice: config.tts.voice }),
  };
}
