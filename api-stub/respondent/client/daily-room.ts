import * as dailyModule from '@daily-co/daily-js';
import type { DailyCall, DailyFactoryOptions } from '@daily-co/daily-js';
import { HANGUP_ACK_MAX_MS } from '../../../lib/room-control.ts';
import type { BotState, JoinInput, Room } from './room.ts';

/**
 * Joins a hosted video-room provider's room (an `https:` room_url) with its own client.
 * The bot's voice arrives as a remote audio track, played through an <audio> element; captions,
 * states and the end arrive as app messages carrying the same JSON as our local rooms' control frames.
 * Bundled on its own (it is large) and loaded only when a session gets such a room.
 */
// The package is CommonJS for Node's resolver and ESM for the bundler; `default` is the class in both.
const Daily = (dailyModule as unknown as { default: { createCallObject(options?: DailyFactoryOptions): DailyCall } }).default;

export async function joinDailyRoom(input: JoinInput): Promise<Room> {
  const [micTrack] = input.microphone.getAudioTracks();
  return runDailyRoom(
    Daily.createCallObject({ audioSource: micTrack ?? true, videoSource: false, subscribeToTracksAutomatically: true }),
    input,
  );
}

/** The part of Daily's call object this page uses (the seam its test drives with a stand-in call). */
export type DailyCallLike = Pick<DailyCall, 'on' | 'join' | 'leave' | 'destroy' | 'sendAppMessage'>;

export async function runDailyRoom(call: DailyCallLike, input: JoinInput): Promise<Room> {
  const { events } = input;
  const players = new Map<string, HTMLAudioElement>();
  let ended = false;
  let joined = false;
  let left = false;
  let botEnded: () => void = () => undefined;
  const botEndedSignal = new Promise<void>((resolve) => (botEnded = resolve));
  const leaveCall = async () => {
    if (left) return;
    left = true;
    await call.leave();
  };

  call.on('track-started', (event) => {
    if (!event?.participant || event.participant.local || event.track.kind !== 'audio') return;
    const audio = document.createElement('audio');
    audio.autoplay = true;
    audio.srcObject = new MediaStream([event.track]);
    document.body.appendChild(audio);
    players.set(event.participant.session_id, audio);
    events.onBotAudio();
  });
  call.on('track-stopped', (event) => {
    const id = event?.participant?.session_id;
    if (id) {
      players.get(id)?.remove();
      players.delete(id);
    }
  });
  call.on('app-message', (event) => {
    const data = event?.data as Record<string, unknown> | undefined;
    if (!data) return;
    if (data.type === 'state' && (data.state === 'speaking' || data.state === 'listening' || data.state === 'thinking'))
      events.onState(data.state as BotState);
    if (data.type === 'caption' && (data.speaker === 'bot' || data.speaker === 'respondent') && typeof data.text === 'string') {
      events.onCaption({ speaker: data.speaker, text: data.text, final: data.final === true });
    }
    // Daily's own jitter buffer is all that is queued here; the bot's pacing keeps it short.
    if (data.type === 'interrupt') events.onInterrupted();
    if (data.type === 'ended') botEnded();
    if (data.type === 'ended' && !ended) {
      ended = true;
      events.onEnded(typeof data.reason === 'string' ? data.reason : 'completed');
      void leaveCall();
    }
  });
  call.on('error', (event) => {
    // Before the join settles, its rejection reports the failure (once); afterwards, this does.
    if (ended || !joined) return;
    ended = true;
    events.onError({ code: 'room_error', message: event?.errorMsg ?? 'The interview room failed.', retryable: true });
  });

  try {
    await call.join({ url: input.roomUrl, token: input.token });
  } catch (err) {
    ended = true;
    void call.destroy();
    throw err;
  }
  joined = true;
  events.onJoined();
  let leaving = false;
  return {
    leave() {
      if (leaving) return;
      leaving = true;
      const hungUp = !ended;
      ended = true;
      for (const audio of players.values()) audio.remove();
      // Same vocabulary as local rooms: the bot ends the session as a hang-up at once. The app message
      // and the leave travel apart, so the call is left once the bot has answered with `ended` (or
      // HANGUP_ACK_MAX_MS), or the bot may see only a respondent who left, as in LiveKit rooms.
      if (hungUp) call.sendAppMessage({ type: 'hangup' }, '*');
      const acknowledged = hungUp
        ? Promise.race([botEndedSignal, new Promise((resolve) => setTimeout(resolve, HANGUP_ACK_MAX_MS))])
        : Promise.resolve();
      void acknowledged
        .then(leaveCall)
        .then(() => call.destroy())
        .catch(() => undefined);
    },
  };
}
