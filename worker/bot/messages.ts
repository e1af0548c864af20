import { z } from 'zod';
import { InterviewSchema, type InterviewDefinition, type InterviewQuestion } from '../../lib/interview.ts';
import type { JoinTicket } from '../rooms/join-ticket.ts';
import { JoinTicketSchema } from '../rooms/registry.ts';
import { BotEventSchema, type BotEvent } from '../telemetry/bot-events.ts';

/**
 * The messages between the worker (parent) and a bot process (child) over Node's IPC channel.
 * The bot's telemetry travels as typed events (telemetry/bot-events.ts); the worker turns them into spans and metrics.
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
  { status: 'completed'; response: { transcriptKey: string; summary: string } } | { status: 'failed'; reason: string; message: string };

/**
 * `stop` ends one session of the process (it reports failed with `reason`); `retire` ends a
 * recycling process once the worker knows none of its sessions is left or on its way.
 */
export type ToBot = { type: 'assign'; job: BotJob } | { type: 'stop'; sessionId: string; reason: string } | { type: 'retire' };

export type FromBot =
  | { type: 'ready' }
  | { type: 'telemetry'; sessionId: string; event: BotEvent }
  | { type: 'finished'; sessionId: string; outcome: Outcome }
  /** The process held a bounded but large amount of audio: give it no new session, retire it once its sessions end. */
  | { type: 'recycling' };

const text = (max: number) => z.string().max(max);
const OutcomeSchema = z.union([
  z.object({ status: z.literal('completed'), response: z.object({ transcriptKey: text(1024), summary: text(100_000) }) }),
  z.object({ status: z.literal('failed'), reason: text(128), message: text(2000) }),
]);

/** A bot's message, checked by the worker: a bot is our code, but a broken one must not take the worker down. */
export const FromBotSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('telemetry'), sessionId: text(128), event: BotEventSchema }),
  z.object({ type: z.literal('finished'), sessionId: text(128), outcome: OutcomeSchema }),
  z.object({ type: z.literal('recycling') }),
]);

/** The worker's message, checked by the bot like the bot's are by the worker: the IPC boundary. */
export const ToBotSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('assign'),
    job: z.object({ sessionId: text(128), interviewId: text(128), interview: InterviewSchema, ticket: JoinTicketSchema }),
  }),
  z.object({ type: z.literal('stop'), sessionId: text(128), reason: text(128) }),
  z.object({ type: z.literal('retire') }),
]);
