import { z } from 'zod';

/**
 * The realtime events a client may send, as schemas (docs/speech.md, "API"): whatever a JSON frame
 * holds (keys like `__proto__` or `toString`, objects where strings belong), it is either one of
 * these events or a clear mistake naming its param; nothing of the client's is ever converted with
 * String() or called. A mistake keeps the code and message the server has always answered with.
 */
export const SESSION_RATE = 24_000;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const ENGLISH = /^en(-[A-Za-z]{2})?$/i;

const Envelope = z.object({ type: z.unknown().optional(), event_id: z.unknown().optional() });
const EventType = z.enum(['session.update', 'input_audio_buffer.append', 'input_audio_buffer.commit', 'input_audio_buffer.clear']);

const Transcription = z.object({ model: z.string().trim().min(1), language: z.string().regex(ENGLISH).optional() }).nullable();
const SessionUpdate = z.object({
  session: z.object({
    type: z.literal('transcription'),
    audio: z
      .object({
        input: z
          .object({
            format: z.object({ type: z.literal('audio/pcm'), rate: z.literal(SESSION_RATE).optional() }).optional(),
            turn_detection: z.null().optional(),
            transcription: Transcription.optional(),
          })
          .optional(),
      })
      .optional(),
  }),
});
const Append = z.object({ audio: z.string().regex(BASE64) });

export type SessionUpdateEvent = z.infer<typeof SessionUpdate>;

export type ClientEvent =
  | { type: 'session.update'; eventId: string | null; session: SessionUpdateEvent['session'] }
  | { type: 'input_audio_buffer.append'; eventId: string | null; audio: string }
  | { type: 'input_audio_buffer.commit' | 'input_audio_buffer.clear'; eventId: string | null };

export interface EventMistake {
  mistake: true;
  code: string;
  message: string;
  param: string | null;
  eventId: string | null;
}

const mistake = (eventId: string | null, code: string, message: string, param: string | null = null): EventMistake => ({
  mistake: true,
  code,
  message,
  param,
  eventId,
});

/** A client's value in a message, safely: a string quoted and cut, anything else named by its kind. */
function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.slice(0, 60));
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object'
    ? 'an object'
    : typeof value === 'number' || typeof value === 'boolean'
      ? JSON.stringify(value)
      : typeof value;
}

/** What each param of session.update is answered with, in the order the server checks them. */
const UPDATE_MISTAKES: ReadonlyArray<{ path: string; code: string; message: string }> = [
  {
    path: 'session.type',
    code: 'invalid_request_error',
    message: 'session.update needs session.type "transcription" (this server serves transcription sessions only).',
  },
  { path: 'session.audio.input', code: 'invalid_value', message: 'session.audio.input must be an object.' },
  { path: 'session.audio.input.format.rate', code: 'invalid_value', message: `Only ${SESSION_RATE} is supported.` },
  { path: 'session.audio.input.format', code: 'invalid_value', message: "Only 'audio/pcm' (16-bit, 24 kHz, mono) is supported." },
  {
    path: 'session.audio.input.turn_detection',
    code: 'invalid_value',
    message: 'Server turn detection is not supported here: send turn_detection null and commit the buffer yourself.',
  },
  {
    path: 'session.audio.input.transcription.language',
    code: 'unsupported_language',
    message: 'This server recognises English only (language en).',
  },
  { path: 'session.audio.input.transcription', code: 'invalid_value', message: 'session.audio.input.transcription needs a model.' },
];

function updateMistake(error: z.ZodError, eventId: string | null): EventMistake {
  // A session that is not an object is answered as a missing session.type; session.audio that is
  // not an object as a bad session.audio.input. Each issue goes to the most specific rule whose path
  // holds it, and the first such rule in the order above is answered.
  const normalise = (p: string) => (p === 'session' ? 'session.type' : p === 'session.audio' ? 'session.audio.input' : p);
  const ruleOf = (p: string) => {
    const matching = UPDATE_MISTAKES.map((rule, index) => ({ rule, index })).filter(
      ({ rule }) => p === rule.path || p.startsWith(`${rule.path}.`),
    );
    return matching.sort((a, b) => b.rule.path.length - a.rule.path.length)[0]?.index ?? Infinity;
  };
  const first = Math.min(...error.issues.map((issue) => ruleOf(normalise(issue.path.map(String).join('.')))));
  const rule = UPDATE_MISTAKES[first];
  if (!rule) return mistake(eventId, 'invalid_value', 'session.update is not valid.', 'session');
  const param =
    rule.path === 'session.audio.input.format'
      ? 'session.audio.input.format.type'
      : rule.path === 'session.audio.input.transcription'
        ? 'session.audio.input.transcription.model'
        : rule.path;
  return mistake(eventId, rule.code, rule.message, param);
}

/** One parsed JSON value -> the event it is, or the mistake to answer. */
export function parseClientEvent(json: unknown): ClientEvent | EventMistake {
  const envelope = Envelope.safeParse(json);
  if (!envelope.success || Array.isArray(json))
    return mistake(null, 'invalid_json', 'The server could not parse the event: expected a JSON object in a text frame.');
  const eventId = typeof envelope.data.event_id === 'string' ? envelope.data.event_id.slice(0, 128) : null;
  const type = EventType.safeParse(envelope.data.type);
  if (!type.success) {
    return mistake(
      eventId,
      'invalid_value',
      `Invalid value: ${describe(envelope.data.type)}. This server accepts session.update and input_audio_buffer.append, commit and clear.`,
      'type',
    );
  }
  switch (type.data) {
    case 'session.update': {
      const update = SessionUpdate.safeParse(json);
      return update.success ? { type: type.data, eventId, session: update.data.session } : updateMistake(update.error, eventId);
    }
    case 'input_audio_buffer.append': {
      const append = Append.safeParse(json);
      return append.success
        ? { type: type.data, eventId, audio: append.data.audio }
        : mistake(eventId, 'invalid_value', "Invalid 'audio'. Expected base64-encoded audio bytes.", 'audio');
    }
    default:
      return { type: type.data, eventId };
  }
}

export const isMistake = (value: ClientEvent | EventMistake): value is EventMistake => 'mistake' in value;
