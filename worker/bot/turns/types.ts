/**
 * The seams of turn-taking (issue 13), so each part can be built and tested on its own:
 * a per-frame speech probability (Silero VAD, or the energy fallback), an end-of-turn model
 * (Smart Turn v3), and a transcription stream that follows the respondent as they speak.
 * All audio here is 16-bit little-endian mono PCM at 16 kHz, the rate the bot listens at.
 */
export const LISTEN_SAMPLE_RATE = 16_000;

/** Speech probability of fixed-size frames; keeps its own recurrent state between frames. */
export interface SpeechProbabilityModel {
  /** Samples per frame (Silero at 16 kHz: 512, 32 ms). */
  readonly frameSamples: number;
  /** The probability, 0..1, that this frame of `frameSamples` samples is speech. */
  probability(frame: Int16Array): Promise<number>;
  /** Forgets the state (a new turn, or a new session on a reused bot). */
  reset(): void;
}

/**
 * A loaded speech-probability model: each listening session opens its own stream (its own recurrent
 * state) on the one copy of the model a bot process holds, however many sessions it runs.
 */
export interface SpeechProbabilitySource {
  readonly frameSamples: number;
  open(): SpeechProbabilityModel;
}

/** Whether the respondent has finished their turn, from how the turn sounds (not its words). */
export interface TurnCompletionModel {
  /**
   * `pcm`: the turn so far, ending now (the model looks at its last 8 s at most).
   * Resolves with the probability, 0..1, that the speaker has finished.
   */
  completion(pcm: Int16Array): Promise<number>;
}

/** One respondent's audio, transcribed while it arrives (one stream per listening session). */
export interface TranscriptionStream {
  /** 16 kHz PCM16 as it arrives; cheap, never blocks. */
  append(pcm: Buffer): void;
  /** Ends the current utterance and resolves with its final text; audio appended later is a new utterance. */
  commit(): Promise<string>;
  /** Drops audio appended since the last commit (sound that turned out not to be a turn). */
  clear(): void;
  /** The text recognised so far in the current utterance (interim; may be empty). */
  readonly interim: string;
  /** Ends the stream; pending commits reject. */
  close(): void;
}

export interface StreamingSpeechToText {
  readonly provider: string;
  readonly model: string;
  /** Opens a stream; rejects with a ProviderError when the provider has no streaming endpoint. */
  openStream(options: { sampleRate: number; language?: string; signal?: AbortSignal }): Promise<TranscriptionStream>;
}
