import type { WorkerConfig } from '../config.ts';
import { openaiClient, providerName, type OpenAIProviderOptions } from './client.ts';
import type { CallPolicy } from './policy.ts';
import { OpenAILanguageModel, type LanguageModel } from './llm.ts';
import { OpenAISpeechToText, type SpeechToText } from './stt.ts';
import { OpenAITextToSpeech, type TextToSpeech } from './tts.ts';
import type { StreamingSpeechToText } from '../bot/turns/types.ts';

export interface Providers {
  stt: SpeechToText;
  /** Speech-to-text while the respondent speaks (STT_MODE=realtime); null: batch only. */
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

/** The default providers: OpenAI-compatible HTTP APIs at the configured base URLs. */
export function createProviders(config: Pick<WorkerConfig, 'stt' | 'llm' | 'tts' | 'providerTimeoutMs' | 'providerRetries'>): Providers {
  const policy = { timeoutMs: config.providerTimeoutMs, retries: config.providerRetries };
  return {
    stt: new OpenAISpeechToText(endpointOptions(config.stt, policy)),
    sttStream: null,
    llm: new OpenAILanguageModel(endpointOptions(config.llm, policy)),
    tts: new OpenAITextToSpeech({ ...endpointOptions(config.tts, policy), voice: config.tts.voice }),
  };
}
