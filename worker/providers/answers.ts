import { z } from 'zod';

/**
 * What a model provider's answer must look like before the bot reads it. Bytes from a provider
 * are outside input: a missing, wrong or huge field must become a ProviderError (a clear failure
 * reason, or a turn the pipeline goes on from), never a TypeError that kills the bot process.
 * Only the fields we read are checked; anything else a provider adds passes through unread.
 */

/** A transcript longer than this is not an answer to one question (about 25 minutes of speech). */
export const MAX_TRANSCRIPT_CHARS = 20_000;
/** A reply longer than this is not one interviewer turn (several minutes of speech). */
export const MAX_REPLY_CHARS = 20_000;
/** Speech longer than this for one sentence is not speech of it: 30 s plus 0.5 s per character. */
export const maxSpeechBytes = (text: string, sampleRate: number): number => Math.round((30 + 0.5 * text.length) * sampleRate) * 2;

/** A speech body: audio, or a type the provider did not name; a JSON or text body is an error page, not PCM. */
export const SpeechContentType = z.string().refine((type) => !/^\s*(application\/(problem\+)?json|text\/)/i.test(type), 'not audio');

const transcript = z.string().max(MAX_TRANSCRIPT_CHARS);

/** POST /audio/transcriptions, response_format json. */
export const TranscriptionAnswer = z.object({ text: transcript });

/** POST /chat/completions without streaming: the first choice's text. */
export const ChatCompletionAnswer = z.object({
  choices: z.array(z.object({ message: z.object({ content: z.string().max(MAX_REPLY_CHARS) }) })).min(1),
});

/** One chunk of a streamed chat completion. A chunk without choices (usage, keep-alive) carries no text. */
export const ChatCompletionChunk = z.object({
  choices: z.array(z.object({ delta: z.object({ content: z.string().nullish() }).nullish() })),
});

const itemId = z.string().min(1).max(512);
const errorDetail = z.object({ type: z.string().nullish(), code: z.string().nullish(), event_id: z.string().nullish() });

/** The realtime transcription events the stream reads; every other type is ignored unread. */
export const RealtimeEvents = {
  'input_audio_buffer.committed': z.object({ item_id: itemId }),
  'conversation.item.input_audio_transcription.delta': z.object({ item_id: itemId, delta: z.string().nullish() }),
  'conversation.item.input_audio_transcription.completed': z.object({ item_id: itemId, transcript }),
  'conversation.item.input_audio_transcription.failed': z.object({ item_id: itemId, error: errorDetail.nullish() }),
  error: z.object({ error: errorDetail }),
  'session.updated': z.object({}),
} as const;

type Known = keyof typeof RealtimeEvents;
export type RealtimeEvent = { [K in Known]: { type: K } & z.infer<(typeof RealtimeEvents)[K]> }[Known];

/**
 * One realtime server message, checked: `event` when it is a type we read and well formed;
 * `malformed` (with its type when it had one) when it claims a type we read but breaks its shape;
 * `other` for types we do not read, and for anything that is not a JSON object with a type.
 */
export type ReadEvent =
  | { kind: 'event'; event: RealtimeEvent }
  | { kind: 'malformed'; type: Known | null; itemId: string | null; problem: string }
  | { kind: 'other' };

const Envelope = z.object({ type: z.string().max(200) });

export function readRealtimeEvent(data: string): ReadEvent {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    return { kind: 'malformed', type: null, itemId: null, problem: 'not JSON' };
  }
  const envelope = Envelope.safeParse(json);
  if (!envelope.success) return { kind: 'malformed', type: null, itemId: null, problem: 'not an event object with a type' };
  const type = envelope.data.type;
  if (!Object.hasOwn(RealtimeEvents, type)) return { kind: 'other' };
  const known = type as Known;
  const parsed = RealtimeEvents[known].safeParse(json);
  if (parsed.success) return { kind: 'event', event: { type: known, ...parsed.data } as RealtimeEvent };
  // The item it concerned, if that much is readable: its commit can then fail at once instead of timing out.
  const item = itemId.safeParse((json as { item_id?: unknown }).item_id);
  return { kind: 'malformed', type: known, itemId: item.success ? item.data : null, problem: describe(parsed.error) };
}

/** Which field broke, never its value (a provider's text may be a respondent's words). */
export function describe(error: z.ZodError): string {
  const first = error.issues[0];
  return first ? `${first.path.join('.') || 'answer'}: ${first.code}` : 'invalid';
}
