/**
 * The one catalogue of failure reasons: the `reason` of a worker's failed outcome report, which
 * customers receive in `interview.failed` (docs/webhooks.md, "Failure reasons", lists them all; a
 * test keeps that table and this object equal). Each key is the code; its value, the meaning.
 * Beside lib/errors.ts, which catalogues the codes of HTTP errors.
 */
const MEANINGS = {
  respondent_absent: 'Nobody joined the room within JOIN_TIMEOUT_SECONDS.',
  idle_timeout: 'The respondent said nothing for IDLE_TIMEOUT_SECONDS after the interviewer spoke.',
  max_duration: 'The interview reached MAX_SESSION_SECONDS.',
  respondent_hangup: 'The respondent hung up before the end.',
  respondent_left: 'The respondent left the room (their connection closed) before the end.',
  stt_timeout: "Speech-to-text did not answer in time, after the worker's retries.",
  stt_error: "Speech-to-text failed (an error status, a broken connection or an unusable answer), after the worker's retries.",
  stt_stream_unavailable: 'The realtime speech-to-text stream could not be opened and no batch fallback was possible.',
  llm_timeout: "The language model did not answer in time, after the worker's retries.",
  llm_error: "The language model failed (an error status, a broken stream or an unusable answer), after the worker's retries.",
  tts_timeout: "Text-to-speech did not finish in time, after the worker's retries.",
  tts_error: "Text-to-speech failed (an error status, a broken stream or an empty answer), after the worker's retries.",
  transcript_store_error: 'The transcript could not be written to the transcript store.',
  room_join_failed: 'The interviewer could not join its room.',
  room_closed: 'The room closed under the interviewer.',
  bot_crashed: 'The interviewer process stopped in the middle of the interview.',
  bot_error: 'The interviewer failed unexpectedly.',
  slot_unavailable: 'The claimed interviewer slot was not available on its worker.',
  invalid_record: "The worker could not read the session's record in its session store.",
  worker_shutdown: 'The worker shut down while the interview was still running, after its drain grace period.',
  worker_lost: 'The worker running the interview stopped responding; another worker reported it.',
} as const;

export type FailureReason = keyof typeof MEANINGS;

/** Every reason with its one-line meaning. */
export const FAILURE_REASON_MEANINGS: Readonly<Record<FailureReason, string>> = Object.freeze(MEANINGS);

/** The reasons by name, for code: `FailureReason.idle_timeout` is `'idle_timeout'`. */
export const FailureReason = Object.freeze(Object.fromEntries(Object.keys(MEANINGS).map((k) => [k, k]))) as {
  readonly [K in FailureReason]: K;
};

export const FAILURE_REASONS: readonly FailureReason[] = Object.freeze(Object.keys(MEANINGS) as FailureReason[]);

export function isFailureReason(value: unknown): value is FailureReason {
  return typeof value === 'string' && Object.hasOwn(MEANINGS, value);
}

/**
 * A model provider's failure as a reason (worker/providers/errors.ts), by provider and how it
 * failed. Only speech-to-text has a stream that can be unavailable; for the others that case is an error.
 */
export const PROVIDER_FAILURE_REASONS = {
  stt: { timeout: FailureReason.stt_timeout, error: FailureReason.stt_error, unavailable: FailureReason.stt_stream_unavailable },
  llm: { timeout: FailureReason.llm_timeout, error: FailureReason.llm_error, unavailable: FailureReason.llm_error },
  tts: { timeout: FailureReason.tts_timeout, error: FailureReason.tts_error, unavailable: FailureReason.tts_error },
} as const satisfies Record<string, Record<'timeout' | 'error' | 'unavailable', FailureReason>>;
