import type { WorkerConfig } from '../config.ts';
import { openaiClient, providerName } from './client.ts';
import { OpenAILanguageModel, type LanguageModel } from './llm.ts';
import { OpenAISpeechToText, type SpeechToText } from './stt.ts';
import { OpenAITextToSpeech, type TextToSpeech } from './tts.ts';

export interface Providers {
  stt: SpeechToText;
  llm: LanguageModel;
  tts: TextToSpeech;
}

/** The default providers: OpenAI-compatible HTTP APIs at the configured base URLs. */
export function createProviders(config: Pick<WorkerConfig, 'stt' | 'llm' | 'tts' | 'providerTimeoutMs' | 'providerRetries'>): Providers {
  const policy = { timeoutMs: config.providerTimeoutMs, retries: config.providerRetries };
  return {
    stt: new OpenAISpeechToText(openaiClient(config.stt), config.stt.model, providerName(config.stt.baseURL), policy),
    llm: new OpenAILanguageModel(openaiClient(config.llm), config.llm.model, providerName(config.llm.baseURL), policy),
    tts: new OpenAITextToSpeech(openaiClient(config.tts), config.tts.model, config.tts.voice, providerName(config.tts.baseURL), policy),
  };
}
