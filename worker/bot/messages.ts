import type { Attributes } from '@opentelemetry/api';
import type { RoomProviderName } from '../config.ts';
import type { InterviewDefinition, InterviewQuestion } from '../../lib/interview.ts';

/**
 * The messages between the worker (parent) and a bot process (child) over Node's IPC channel.
 * Spans measured in the bot travel to the parent, whose OpenTelemetry SDK exports them.
 */
export type { InterviewDefinition, InterviewQuestion };

export interface BotJob {
  sessionId: string;
  interviewId: string;
  interview: InterviewDefinition;
  /** Where the bot joins, with its token as `?token=`: a local room's internal address, or LIVEKIT_URL. */
  joinUrl: string;
  roomProvider: RoomProviderName;
  botCanJoin: boolean;
}

export type Outcome =
  | { status: 'completed'; response: { transcriptKey: string; summary: string } }
  | { status: 'failed'; reason: string; message: string };

export interface SpanRecord {
  name: string;
  startMs: number;
  endMs: number;
  attributes: Attributes;
  error?: string;
}

export type ToBot = { type: 'assign'; job: BotJob } | { type: 'stop'; reason: string };

export type FromBot =
  | { type: 'ready' }
  | { type: 'span'; sessionId: string; span: SpanRecord }
  | { type: 'latency'; provider: 'stt' | 'llm' | 'tts'; operation: string; seconds: number }
  | { type: 'finished'; sessionId: string; outcome: Outcome };
