import type { Attributes } from '@opentelemetry/api';
import { z } from 'zod';

/**
 * What a bot tells the worker about a session as it runs, typed: spans it measured and the
 * measurements behind the worker's turn and provider metrics. The bot only says what happened; one
 * module on the worker side (bot-telemetry.ts) turns these into traces and metrics. It lives in
 * telemetry/, which the bot already imports, so that telemetry never imports from bot/.
 */
/** A span measured in the bot, with its own start and end (wall times, ms). */
export interface SpanRecord {
  name: string;
  startMs: number;
  endMs: number;
  attributes: Attributes;
  error?: string;
}

export type BotEvent =
  | { type: 'span'; span: SpanRecord }
  /** A provider call: speech-to-text's wait for the final text, a model round trip, speech's first byte. */
  | { type: 'provider_latency'; provider: 'stt' | 'llm' | 'tts'; operation: string; seconds: number }
  /** A respondent turn ended: silence, model (the end-of-turn model) or max (the utterance bound). */
  | { type: 'turn_end'; reason: 'silence' | 'model' | 'words' | 'max' }
  /** From the end of the respondent's speech to the bot's first audio of its reply. */
  | { type: 'turn_latency'; seconds: number }
  /** Respondent speech over the bot: barge_in (the bot stopped) or backchannel (it went on). */
  | { type: 'interruption'; kind: 'barge_in' | 'backchannel' };

/** The one sink a bot's stages report through. */
export type BotEventSink = (event: BotEvent) => void;

const text = (max: number) => z.string().max(max);
const AttributeValue = z.union([z.string(), z.number(), z.boolean(), z.array(z.union([z.string(), z.number(), z.boolean()]))]);
export const SpanSchema = z.object({
  name: text(128),
  startMs: z.number(),
  endMs: z.number(),
  attributes: z.record(z.string(), AttributeValue),
  error: text(2000).optional(),
});

/** A bot's event as the worker checks it (a broken bot must not take the worker down). */
export const BotEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('span'), span: SpanSchema }),
  z.object({
    type: z.literal('provider_latency'),
    provider: z.enum(['stt', 'llm', 'tts']),
    operation: text(64),
    seconds: z.number().nonnegative(),
  }),
  z.object({ type: z.literal('turn_end'), reason: z.enum(['silence', 'model', 'words', 'max']) }),
  z.object({ type: z.literal('turn_latency'), seconds: z.number().nonnegative() }),
  z.object({ type: z.literal('interruption'), kind: z.enum(['barge_in', 'backchannel']) }),
]);
