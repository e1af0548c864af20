import { DisconnectReason, Room as LiveKitRoom, RoomEvent, Track, type RemoteTrack } from 'livekit-client';
import {
  CONTROL_TOPIC,
  decodeControl,
  encodeControl,
  HANGUP_ACK_MAX_MS,
  PLAYOUT_MAX_MS,
  PLAYOUT_QUIET_MS,
} from '../../../lib/room-control.ts';
import { firstSoundDetector, playoutWatch } from './first-sound.ts';
import type { BotState, JoinInput, Room } from './room.ts';

/**
 * Joins a LiveKit room (the worker's ROOM_PROVIDER=livekit): `room_url` is the LiveKit server and
 * the token names the room. The microphone goes up as a WebRTC track; the interviewer's voice comes
 * down as one and plays through an <audio> element; states, captions and the end arrive as data
 * messages with the local rooms' vocabulary (lib/room-control.ts), and a hang-up goes back as one.
 * The bot sends "listening" and "ended" once its words have played out at its end; "listening" applies
 * at once, "ended" once the track has been quiet here too (first-sound.ts, playoutWatch).
 * Bundled on its own and loaded only for such rooms.
 */
/** Heard level that counts as the interviewer speaking (WebRTC plays silence between utterances). */
const SPEAKING_RMS = 0.01;

export async function joinLiveKitRoom(input: JoinInput): Promise<Room> {
  const { events } = input;
  const room = new LiveKitRoom({ adaptiveStream: false, dynacast: false });
  const players: HTMLMediaElement[] = [];
  let ended = false;
  let leftByUser = false;
  const firstSound = firstSoundDetector(SPEAKING_RMS);
  const playout = playoutWatch(SPEAKING_RMS, PLAYOUT_QUIET_MS, PLAYOUT_MAX_MS);
  let meter: ReturnType<typeof setInterval> | undefined;
  const context = new AudioContext({ latencyHint: 'interactive' });
  await context.resume();

  // Tells the page when each utterance's first sound plays (the page's onBotAudio), from the level
  // of the received track: the track itself runs all the time.
  const watchLevel = (track: RemoteTrack): void => {
    const analyser = context.createAnalyser();
    analyser.fftSize = 512;
    context.createMediaStreamSource(new MediaStream([track.mediaStreamTrack])).connect(analyser);
    const samples = new Float32Array(analyser.fftSize);
    clearInterval(meter);
    meter = setInterval(() => {
      analyser.getFloatTimeDomainData(samples);
      let sum = 0;
      for (const s of samples) sum += s * s;
      const rms = Math.sqrt(sum / samples.length);
      playout.sample(rms, performance.now());
      if (firstSound.sample(rms)) events.onBotAudio();
    }, 10);
  };

  room.on(RoomEvent.TrackSubscribed, (track) => {
    if (track.kind !== Track.Kind.Audio) return;
    const element = track.attach();
    document.body.appendChild(element);
    players.push(element);
    watchLevel(track);
  });
  // The bot may speak before our join has settled here: its first messages wait for onJoined.
  let joined = false;
  const early: Array<Record<string, unknown>> = [];
  // The bot's `ended`, whenever it comes: a hang-up leaves the room once it has (leave(), below).
  let botEnded: () => void = () => undefined;
  const botEndedSignal = new Promise<void>((resolve) => (botEnded = resolve));
  room.on(RoomEvent.DataReceived, (payload, _participant, _kind, topic) => {
    if (topic !== CONTROL_TOPIC) return;
    const control = decodeControl(payload);
    if (!control) return;
    if (control.type === 'ended') botEnded();
    if (joined) handle(control);
    else early.push(control);
  });
  const handle = (control: Record<string, unknown>): void => {
    if (control.type === 'state' && (control.state === 'speaking' || control.state === 'listening' || control.state === 'thinking'))
      events.onState(control.state as BotState);
    if (control.type === 'caption' && (control.speaker === 'bot' || control.speaker === 'respondent') && typeof control.text === 'string') {
      events.onCaption({ speaker: control.speaker, text: control.text, final: control.final === true });
    }
    // After an interruption the interviewer's next words count as a new first sound.
    if (control.type === 'audio_end' || control.type === 'interrupt') firstSound.arm();
    if (control.type === 'interrupt') events.onInterrupted();
    if (control.type === 'ended' && !ended) {
      ended = true;
      // The bot sent it once its words were out; here they may still be playing, or not yet have
      // started (a slow device): the end is declared, and the room left, once they have played out.
      const reason = typeof control.reason === 'string' ? control.reason : 'completed';
      const arrived = performance.now();
      const settle = setInterval(() => {
        if (!playout.done(arrived, performance.now())) return;
        clearInterval(settle);
        events.onEnded(reason);
        void room.disconnect();
      }, 50);
    }
  };
  room.on(RoomEvent.Disconnected, (reason) => {
    clearInterval(meter);
    for (const element of players) element.remove();
    void context.close();
    if (ended || leftByUser) return;
    ended = true;
    if (reason === DisconnectReason.DUPLICATE_IDENTITY) {
      return events.onError({
        code: 'already_joined',
        message: 'This interview is already open in another window or tab.',
        retryable: false,
      });
    }
    if (reason === DisconnectReason.ROOM_DELETED) {
      return events.onError({
        code: 'worker_fault',
        message: 'The interviewer stopped because of a fault. Please try again.',
        retryable: true,
      });
    }
    events.onError({
      code: 'connection_lost',
      message: 'The connection to the interviewer was lost. Check your network and try again.',
      retryable: true,
    });
  });

  try {
    await room.connect(input.roomUrl, input.token, { autoSubscribe: true });
  } catch (err) {
    ended = true;
    await room.disconnect();
    throw err;
  }
  joined = true;
  events.onJoined();
  for (const control of early.splice(0)) handle(control);
  const [mic] = input.microphone.getAudioTracks();
  // Published after joining, so the greeting is not held up; a failure here is a lost connection.
  if (mic) {
    room.localParticipant.publishTrack(mic, { source: Track.Source.Microphone, dtx: false }).catch(() => {
      if (ended) return;
      ended = true;
      events.onError({
        code: 'microphone_unpublished',
        message: 'Your microphone could not be sent to the interviewer. Please try again.',
        retryable: true,
      });
      void room.disconnect();
    });
  }
  return {
    leave() {
      if (ended || leftByUser) return;
      leftByUser = true;
      ended = true;
      // The hang-up goes on the data channel and the leave on the signalling socket: the room is left
      // once the bot has answered the hang-up (or HANGUP_ACK_MAX_MS), so the bot reports a hang-up
      // rather than a lost respondent. A fixed 250 ms was not enough on a loaded machine.
      void room.localParticipant
        .publishData(encodeControl({ type: 'hangup' }), { reliable: true, topic: CONTROL_TOPIC })
        .then(() => Promise.race([botEndedSignal, new Promise((resolve) => setTimeout(resolve, HANGUP_ACK_MAX_MS))]))
        .catch(() => undefined)
        .finally(() => void room.disconnect());
    },
  };
}
