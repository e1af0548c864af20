import type { BotEventSink } from '../telemetry/bot-events.ts';

/**
 * What an interview tells the process that runs it. One typed object instead of loose optional
 * callbacks: the process (worker/bot/process.ts) forwards telemetry to the worker over IPC and
 * decides about recycling; tests collect the same calls in memory.
 */
export interface InterviewHooks {
  /** Spans and measurements, as typed events (worker/telemetry/bot-events.ts). */
  telemetry: BotEventSink;
  /**
   * The respondent sent more audio than one utterance may hold (a turn ended at the bound, or audio
   * was dropped to keep the bound): this process should be recycled after the session.
   */
  utteranceBound(): void;
  /** Streaming speech-to-text was given up for this session (the provider has none, or it broke). */
  streamingUnavailable(reason: string): void;
}

/** Hooks that record nothing (a caller that wants none of them). */
export const quietHooks: InterviewHooks = {
  telemetry: () => undefined,
  utteranceBound: () => undefined,
  streamingUnavailable: () => undefined,
};
