import type { Attributes } from '@opentelemetry/api';
import { z } from 'zod';
import { InterviewSchema, type InterviewDefinition, type InterviewQuestion } from '../../lib/interview.ts';
import type { JoinTicket } from '../rooms/join-ticket.ts';
import { JoinTicketSchema } from '../rooms/registry.ts';

/**
 * The messages between the worker (parent) and a bot process (child) over Node's IPC channel.
 * Spans measured in the bot travel to the parent, whose OpenTelemetry SDK exports them.
 */
export type { InterviewDefinition, InterviewQuestion };

export interface BotJob {
  sessionId: string;
  interviewId: string;
  interview: InterviewDefinition;
  /** Where and with which token the bot joins its room (worker/rooms/join-ticket.ts). */
  ticket: JoinTicket;
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
  /** A respondent turn ended (reason silence|model|max), or the respondent cut in (barge_in|backchannel). */
  | { type: 'turn'; kind: 'turn_end' | 'interruption'; reason: string; latencySeconds?: number }
  /** `recycle`: the bot exits after this session (it held a bounded but large amount of audio). */
  | { type: 'finished'; sessionId: string; outcome: Outcome; recycle?: boolean };

const text = (max: number) => z.string().max(max);
const OutcomeSchema = z.union([
  z.object({ status: z.literal('completed'), response: z.object({ transcriptKey: text(1024), summary: text(100_000) }) }),
  z.object({ status: z.literal('failed'), reason: text(128), message: text(2000) }),
]);
const AttributeValue = z.union([z.string(), z.number(), z.boolean(), z.array(z.union([z.string(), z.number(), z.boolean()]))]);
const SpanSchema = z.object({ name: text(128), startMs: z.number(), endMs: z.number(), attributes: z.record(z.string(), AttributeValue), error: text(2000).optional() });

/** A bot's message, checked by the worker: a bot is our code, but a broken one must not take the worker down. */
export const FromBotSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('span'), sessionId: text(128), span: SpanSchema }),
  z.object({ type: z.literal('latency'), provider: z.enum(['stt', 'llm', 'tts']), operation: text(64), seconds: z.number().nonnegative() }),
  z.object({ type: z.literal('turn'), kind: z.enum(['turn_end', 'interruption']), reason: text(32), latencySeconds: z.number().nonnegative().optional() }),
  z.object({ type: z.literal('finished'), sessionId: text(128), outcome: OutcomeSchema, recycle: z.boolean().optional() }),
]);

/** The worker's message, checked by the bot like the bot's are by the worker: the IPC boundary. */
export const ToBotSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('assign'),
    job: z.object({ sessionId: text(128), interviewId: text(128), interview: InterviewSchema, ticket: JoinTicketSchema }),
  }),
  z.object({ type: z.literal('stop'), reason: text(128) }),
]);
