import type { LatencyProfile as FakeLatencyProfile } from '../../test/fakes/openai-compatible.ts';

/**
 * Latency profiles for the stand-in providers (test/fakes/openai-compatible.ts). "zero": the
 * providers answer at once, so what is left is the system's own share. "realistic": figures the
 * providers (or independent measurements) publish, looked up 2026-11-23; where nothing is
 * published the figure is an assumption and says so. Every figure is the time to the first byte
 * of the answer as the worker sees it, network included.
 */
export interface LatencyProfile {
  name: 'zero' | 'realistic';
  /** Batch `/audio/transcriptions` of a finished answer (whisper-1), request to response. */
  sttBatchMs: number;
  /** Realtime transcription: commit of the audio buffer -> final transcript (gpt-4o-mini-transcribe). */
  sttRealtimeFinalMs: number;
  /** Chat completion, streamed: request -> first token (gpt-4o-mini), then between tokens. */
  llmFirstTokenMs: number;
  llmPerTokenMs: number;
  /** Text-to-speech: request -> first audio byte. */
  ttsFirstByteMs: number;
}

export const ZERO: LatencyProfile = {
  name: 'zero',
  sttBatchMs: 0,
  sttRealtimeFinalMs: 0,
  llmFirstTokenMs: 0,
  llmPerTokenMs: 0,
  ttsFirstByteMs: 0,
};

export const REALISTIC: LatencyProfile = {
  name: 'realistic',
  sttBatchMs: 600,
  sttRealtimeFinalMs: 150,
  llmFirstTokenMs: 300,
  llmPerTokenMs: 10,
  ttsFirstByteMs: 150,
};

/** Where each realistic figure comes from; printed under the table. */
export const REALISTIC_SOURCES: readonly string[] = [
  'STT batch 600 ms (assumption): OpenAI publishes no latency for whisper-1; an independent guide ' +
    '(theneuralbase.com, "Whisper API latency expectations") reports about 2 s for a 10 s clip, i.e. 0.2 x the ' +
    'audio; our answers are 1-4 s.',
  'STT realtime final 150 ms (published by a peer): OpenAI publishes no figure for gpt-4o-mini-transcribe over the ' +
    'realtime API; ElevenLabs states 150 ms for Scribe v2 Realtime (elevenlabs.io/docs/changelog/2025/11/12).',
  'LLM first token 300 ms, then 10 ms per token (independent measurements): gpt-4o-mini median TTFT 250 ms and 115 ' +
    'tokens/s (kickllm.com "AI API latency comparison", April 2026, US-East, streaming), TTFT about 0.4 s ' +
    '(apikeyhealth.com, March 2026); OpenAI publishes none.',
  'TTS first byte 150 ms (published model time + assumed network): ElevenLabs Flash v2.5 "~75ms" model latency, ' +
    'excluding network (elevenlabs.io/docs/overview/models); OpenAI publishes none for tts-1 / gpt-4o-mini-tts; +75 ' +
    'ms assumed for the request and network.',
];

/** The fake's latency profile (test/fakes/openai-compatible.ts) for a profile; zero sets nothing. */
export function fakeProfile(profile: LatencyProfile): FakeLatencyProfile {
  if (profile.name === 'zero') return {};
  return {
    stt: { baseMs: profile.sttBatchMs },
    sttStream: { baseMs: profile.sttRealtimeFinalMs },
    chat: { firstTokenMs: profile.llmFirstTokenMs, perTokenMs: profile.llmPerTokenMs },
    tts: { firstByteMs: profile.ttsFirstByteMs },
  };
}
