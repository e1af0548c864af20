/**
 * Control messages in a LiveKit room: the local-room vocabulary (docs/local-room-protocol.md:
 * state, caption, audio_end, ended from the bot; hangup from the respondent), as UTF-8 JSON in
 * reliable data packets on one topic, so other data in the room is never mistaken for them.
 */
export const CONTROL_TOPIC = 'voice.control';

/**
 * A respondent who hangs up sends `hangup` and leaves once the bot has answered it with `ended`, or
 * after this long. The hang-up travels on the data channel and the leave on the signalling socket:
 * leaving right after the send can close the data channel before the message is out, and the bot
 * then sees only a respondent who left (`respondent_left`), as a loaded machine showed (docs/testing.md).
 */
export const HANGUP_ACK_MAX_MS = 3000;

/**
 * `ended` is sent once the bot's last words have played out at its end, and the data channel
 * overtakes the audio's jitter buffer: a respondent declares the end, and leaves, once the
 * interviewer's track has been quiet this long after it (at most PLAYOUT_MAX_MS), or the closing
 * words are cut off, as a loaded machine showed (docs/testing.md).
 */
export const PLAYOUT_QUIET_MS = 800;
export const PLAYOUT_MAX_MS = 10_000;

export function encodeControl(msg: Record<string, unknown>): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(JSON.stringify(msg));
}

/** A message with a string `type`, or null for anything else. */
export function decodeControl(payload: Uint8Array): ({ type: string } & Record<string, unknown>) | null {
  try {
    const msg = JSON.parse(new TextDecoder().decode(payload)) as unknown;
    if (msg && typeof msg === 'object' && !Array.isArray(msg) && typeof (msg as { type?: unknown }).type === 'string')
      return msg as { type: string } & Record<string, unknown>;
  } catch {
    // Not ours.
  }
  return null;
}
