import {
  AudioFrame,
  AudioSource,
  AudioStream,
  LocalAudioTrack,
  Room,
  RoomEvent,
  TrackKind,
  TrackPublishOptions,
  TrackSource,
  type RemoteTrack,
} from '@livekit/rtc-node';
import { CONTROL_TOPIC, decodeControl, encodeControl } from '../../lib/room-control.ts';
import { levelDbfs } from '../../worker/bot/audio.ts';
import { BenchRespondent, FRAME_BYTES, type BenchRespondentOptions, type SessionTimeline } from './respondent.ts';

/**
 * The bench respondent (respondent.ts) in a LiveKit room, over a real livekit-server: its
 * microphone is a published track fed in real time, the bot's voice is what its subscribed track
 * delivers through WebRTC (so the loudspeaker is real, not simulated: what is heard and when is
 * what arrives, jitter buffer included), control messages are data on the control topic. The
 * bot's audio counts from the first frame above HEARD_DBFS, since WebRTC sends silence between
 * utterances.
 */
const RATE = 16_000;
const FRAME_SAMPLES = FRAME_BYTES / 2;
const HEARD_DBFS = -50;

export async function runLiveKitBenchRespondent(options: BenchRespondentOptions): Promise<SessionTimeline> {
  const room = new Room();
  const source = new AudioSource(RATE, 1, 100);
  let stopped = false;
  let hungUp = false;
  let awaitingUtterance = false;
  /** End of the last audible frame of the bot's voice, as received. */
  let quietSince = -Infinity;
  let closeRoom: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => (closeRoom = resolve));
  const respondent = new BenchRespondent(options, () => {
    hungUp = true;
    options.beforeHangup?.();
    void room.localParticipant
      ?.publishData(encodeControl({ type: 'hangup' }), { reliable: true, topic: CONTROL_TOPIC })
      .catch(() => undefined)
      // The bot answers a hang-up with `ended`; leaving at once could overtake the message.
      .finally(() => setTimeout(() => closeRoom(), 2000));
  });

  const listenTo = (track: RemoteTrack): void => {
    if (track.kind !== TrackKind.KIND_AUDIO) return;
    void (async () => {
      for await (const frame of new AudioStream(track, { sampleRate: 24_000, numChannels: 1 })) {
        if (stopped) break;
        const pcm = Buffer.from(frame.data.buffer, frame.data.byteOffset, frame.data.byteLength);
        if (levelDbfs(pcm) < HEARD_DBFS) continue;
        const t = performance.now();
        quietSince = t + (frame.samplesPerChannel / frame.sampleRate) * 1000;
        respondent.botAudio(t, awaitingUtterance ? t : null);
        awaitingUtterance = false;
      }
    })().catch(() => undefined);
  };
  room.on(RoomEvent.TrackSubscribed, (track) => listenTo(track));
  room.on(RoomEvent.Disconnected, () => closeRoom());
  room.on(RoomEvent.DataReceived, (payload, _participant, _kind, topic) => {
    if (topic !== CONTROL_TOPIC) return;
    const msg = decodeControl(payload);
    if (!msg) return;
    const t = performance.now();
    if (msg.type === 'state' && (msg.state === 'speaking' || msg.state === 'listening' || msg.state === 'thinking')) {
      respondent.botState(msg.state, t);
      if (msg.state === 'speaking') awaitingUtterance = true;
    } else if (msg.type === 'caption' && msg.speaker === 'bot' && msg.final === true) {
      respondent.botCaption(String(msg.text), t);
    } else if (msg.type === 'interrupt') {
      respondent.botInterrupted(t);
    } else if (msg.type === 'ended') {
      respondent.ended(String(msg.reason));
      closeRoom();
    }
    respondent.decide(t, quietSince);
  });

  await room.connect(options.roomUrl, options.token, { autoSubscribe: true, dynacast: false });
  const track = LocalAudioTrack.createAudioTrack('microphone', source);
  await room.localParticipant!.publishTrack(track, new TrackPublishOptions({ source: TrackSource.SOURCE_MICROPHONE }));
  for (const p of room.remoteParticipants.values()) for (const pub of p.trackPublications.values()) if (pub.track) listenTo(pub.track);

  // The microphone: captureFrame paces it in real time; a frame leaves when the queue ahead of it has.
  const mic = (async () => {
    while (!stopped && !hungUp) {
      const frame = AudioFrame.create(RATE, 1, FRAME_SAMPLES);
      const sendAt = performance.now() + source.queuedDuration;
      Buffer.from(frame.data.buffer, frame.data.byteOffset, frame.data.byteLength).set(respondent.nextFrame(sendAt));
      await source.captureFrame(frame);
      respondent.decide(performance.now(), quietSince);
    }
  })();

  const timeoutMs = options.timeoutMs ?? 600_000;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
  const outcome = await Promise.race([closed.then(() => 'closed' as const), timedOut]);
  clearTimeout(timer);
  stopped = true;
  respondent.stop();
  await mic.catch(() => undefined);
  await room.disconnect().catch(() => undefined);
  await source.close().catch(() => undefined);
  const timeline = respondent.timeline();
  if (outcome === 'timeout')
    throw new Error(
      `the LiveKit bench session did not finish within ${timeoutMs} ms: ${timeline.unplayed} items left, ${timeline.plays.length} played`,
    );
  return timeline;
}
