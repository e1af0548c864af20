/**
 * Span names and attribute keys, in one place. Respondent content (what they said, the transcript,
 * the summary) never goes into a span name, an attribute or a log line.
 */
export const SPAN_SESSION_START = 'session.start';
export const SPAN_LLM_TURN = 'llm.turn';
export const SPAN_TTS_FIRST_BYTE = 'tts.first_byte';
/** The bot joining its room (after spawn answered, so not part of session.start's time). */
export const SPAN_ROOM_CONNECT = 'room.connect';

export const ATTR_SESSION_ID = 'session.id';
export const ATTR_INTERVIEW_ID = 'interview.id';
export const ATTR_PROVIDER = 'provider.name';
export const ATTR_MODEL = 'provider.model';
export const ATTR_ROOM_PROVIDER = 'room.provider';
export const ATTR_ROOM_CONNECT_MS = 'room.connect_ms';
export const ATTR_SLOT_ID = 'worker.slot.id';
export const ATTR_POD = 'worker.pod';
export const ATTR_SPAWN_OUTCOME = 'spawn.outcome';
export const ATTR_LLM_PURPOSE = 'llm.purpose';
export const ATTR_LLM_TTFT_MS = 'llm.time_to_first_token_ms';
/** A decision call started on the words of a pause, before the turn ended (preemptive, issue 21). */
export const ATTR_LLM_SPECULATIVE = 'llm.speculative';
/** The call was dropped (aborted by the dialogue: the respondent went on, or the words changed); its reply was never spoken. */
export const ATTR_LLM_DROPPED = 'llm.dropped';

export const TRACER_NAME = 'voice-worker';

/** Turn-taking (issue 13): the end-of-turn decision, and the final text after it. */
export const SPAN_TURN_END = 'turn.end';
export const SPAN_STT_FINAL = 'stt.final';
export const ATTR_TURN_END_REASON = 'turn.end_reason';
export const ATTR_TURN_PROBABILITY = 'turn.model_probability';
export const ATTR_TURN_INFERENCE_MS = 'turn.model_inference_ms';
/** Silence added to this respondent's end of turn from their own long pauses (issue 21). */
export const ATTR_TURN_PATIENCE_EXTRA_MS = 'turn.patience_extra_ms';
export const ATTR_STT_MODE = 'stt.mode';
