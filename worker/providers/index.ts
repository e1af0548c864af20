import { createLogger, type Logger } from '../../lib/log.ts';
import type { StreamingSpeechToText } from '../bot/turns/types.ts';
import type { TurnPolicy, WorkerConfig } from '../config.ts';
import { openaiClient, providerName, type OpenAIProviderOptions } from './client.ts';
import { ProviderConnections } from './connections.ts';
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
  /**
   * Opens a connection to the language model's and speech's servers if none is open (called as
   * the respondent starts speaking, so their turn's calls pay no handshake); settles when they are
   * open (or failed to open: the next call connects as before). Absent: nothing to warm.
   */
  warm?(): Promise<void>;
}

const endpointOptions = (endpoint: WorkerConfig['llm'], policy: CallPolicy, connections: ProviderConnections): OpenAIProviderOptions => ({
  client: openaiClient(endpoint, connections.fetch),
  model: endpoint.model,
  provider: providerName(endpoint.baseURL),
  policy,
});

type ProviderConfig = Pick<WorkerConfig, 'stt' | 'llm' | 'tts' | 'providerTimeoutMs' | 'providerRetries'> & {
  /** PROVIDER_KEEPALIVE_MS (connections.ts; absent: its default, 60 s); 0: Node's fetch as it is. */
  providerKeepAliveMs?: number;
  /** PROVIDER_WARM: open connections as the respondent starts speaking. */
  providerWarm?: boolean;
  /** Without it (older callers), speech-to-text is batch only. */
  turns?: { engines: Pick<TurnPolicy['engines'], 'sttMode' | 'sttRealtimeModel'> };
};

/** The default providers: OpenAI-compatible APIs at the configured base URLs. */
export function createProviders(config: ProviderConfig, options: { logger?: Logger } = {}): Providers {
  const policy = { timeoutMs: config.providerTimeoutMs, retries: config.providerRetries };
  const connections = new ProviderConnections({
    keepAliveMs: config.providerKeepAliveMs ?? 60_000,
    warmTimeoutMs: config.providerTimeoutMs,
  });
  const sttStream =
    config.turns?.engines.sttMode === 'realtime'
      ? new OpenAIRealtimeSpeechToText({
          baseURL: config.stt.baseURL,
          apiKey: config.stt.apiKey,
          model: config.turns.engines.sttRealtimeModel,
          provider: providerName(config.stt.baseURL),
          policy,
          // The fallback to batch is logged once per process (the bot's stdout reaches the worker's log).
          logger: options.logger ?? createLogger({ name: 'providers' }),
        })
      : null;
  return {
    stt: new OpenAISpeechToText(endpointOptions(config.stt, policy, connections)),
    sttStream,
    llm: new OpenAILanguageModel(endpointOptions(config.llm, policy, connections)),
    tts: new OpenAITextToSpeech({ ...endpointOptions(config.tts, policy, connections), voice: config.tts.voice }),
    // The calls a turn's end makes at once: the language model's decision and the reply's speech.
    ...(config.providerWarm ? { warm: () => connections.warm([config.llm.baseURL, config.tts.baseURL]) } : {}),
  };
}
