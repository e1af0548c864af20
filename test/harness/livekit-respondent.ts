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
import { levelDbfs } from '../../worker/bot/audio.ts';
import {
  CONTROL_TOPIC,
  decodeControl,
  encodeControl,
  HANGUP_ACK_MAX_MS,
  PLAYOUT_MAX_MS,
  PLAYOUT_QUIET_MS,
} from '../../lib/room-control.ts';
import { playoutWatch } from '../../api-stub/respondent/client/first-sound.ts';

/**
 * A respondent in Node for LiveKit rooms (@livekit/rtc-node), behaving like the respondent page:
 * a microphone track fed in real time (20 ms frames of 16 kHz speech or silence), the bot's voice
 * heard from its track, control messages as data. At each `listening` it speaks the next answer
 * (or hangs up / stays silent). Records the messages and a timeline (performance.now() ms).
 */
const RATE = 16_000;
const FRAME_SAMPLES = RATE / 50;
/** Received bot audio above this level counts as speech (WebRTC delivers silence between utterances). */
const HEARD_DBFS = -50;
/** Silence in the bot's voice shorter than this is a gap; longer separates utterances. */
const GAP_MAX_MS = 500;

export interface LiveKitRespondentOptions {
  url: string;
  token: string;
  /** PCM16 16 kHz per answer; past the list the last one is said again. */
  answers: Buffer[];
  /** Called at each `listening` (1-based turn). */
  onListening?: (turn: number) => 'answer' | 'hangup' | 'silent';
  reactionMs?: number;
  timeoutMs?: number;
  /** `state <state>` and `caption <speaker>: <text>` lines, as room-client.ts gives them. */
  onEvent?: (line: string) => void;
  /** Every microphone frame as sent (16 kHz) and every frame of the bot's voice as received (24 kHz), e.g. for a ConversationRecorder. */
  onAudio?: (side: 'respondent' | 'bot', pcm: Buffer, sampleRate: number, at: number) => void;
  /**
   * Barge-in: asked at the first audible frame of each bot utterance (1-based) with the number of
   * answers given so far; speech to start `afterMs` later, or null. That speech is the answer to the
   * question it interrupts: a `listening` while the respondent still talks starts no new answer.
   */
  interruptAt?: (utterance: number, answersGiven: number) => { pcm: Buffer; afterMs: number } | null;
}

export interface LiveKitRespondentResult {
  connectMs: number;
  /** performance.now() when joined, and when the room ended for us. */
  joinedAt: number;
  endedAt: number;
  messages: Array<Record<string, unknown>>;
  states: Array<{ state: string; at: number }>;
  captions: Array<{ speaker: string; text: string; final: boolean; at: number }>;
  ended: string | null;
  /** Milliseconds of bot audio heard above HEARD_DBFS. */
  heardMs: number;
  /**
   * Each bot utterance: when its first audible frame arrived (performance.now()). Utterances are
   * told apart by the audio (a silence of GAP_MAX_MS or more), not by `audio_end`: LiveKit's data
   * channel overtakes the audio's jitter buffer, so the message may come before an utterance's last
   * frames, and a turn's latency would be taken to the tail of the next one.
   */
  botUtterances: Array<{ firstAudio: number; bytes: number }>;
  /**
   * Gaps in the bot's voice (ms each): a run of quiet frames between audible ones, shorter than
   * GAP_MAX_MS (longer silences are between utterances), the respondent silent meanwhile (a bot that
   * pauses for speech over it is yielding, not late). Late or missing frames on the way, as heard.
   * Control messages cannot bound utterances here: LiveKit's data channel overtakes the audio's
   * jitter buffer, so `audio_end` may arrive before an utterance's last frames.
   */
  gapsMs: number[];
  answers: Array<{ started: number; finished: number; interruption?: boolean }>;
  disconnectedBy: 'ended' | 'server' | 'hangup' | 'timeout';
}

export async function runLiveKitRespondent(options: LiveKitRespondentOptions): Promise<LiveKitRespondentResult> {
  const room = new Room();
  const source = new AudioSource(RATE, 1, 100);
  const result: LiveKitRespondentResult = {
    connectMs: 0,
    joinedAt: 0,
    endedAt: 0,
    messages: [],
    states: [],
    captions: [],
    ended: null,
    heardMs: 0,
    botUtterances: [],
    gapsMs: [],
    answers: [],
    disconnectedBy: 'server',
  };
  // In an object: set from event handlers, read by the microphone loop.
  const mouth: { speaking: { pcm: Buffer; offset: number; startAt: number; interruption?: boolean } | null } = { speaking: null };
  let turn = 0;
  let awaitingAudio = true;
  /** Quiet received since the current utterance was last audible. */
  let quietMs = 0;
  let overlapped = false;
  let heardAny = false;
  let stopped = false;
  /** We sent the hang-up: the room ends because of it, whichever of its signs comes first. */
  let hungUp = false;
  /** Like the respondent page: after `ended`, the end counts once the bot's track has been quiet a while. */
  const playout = playoutWatch(10 ** (HEARD_DBFS / 20), PLAYOUT_QUIET_MS, PLAYOUT_MAX_MS);
  let finish: (by: LiveKitRespondentResult['disconnectedBy']) => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    finish = (by) => {
      if (stopped) return;
      stopped = true;
      result.endedAt = performance.now();
      result.disconnectedBy = by;
      resolve();
    };
  });

  const listenTo = (track: RemoteTrack): void => {
    if (track.kind !== TrackKind.KIND_AUDIO) return;
    void (async () => {
      for await (const frame of new AudioStream(track, { sampleRate: 24_000, numChannels: 1 })) {
        const pcm = Buffer.from(frame.data.buffer, frame.data.byteOffset, frame.data.byteLength);
        options.onAudio?.('bot', pcm, frame.sampleRate, performance.now());
        const frameMs = (frame.samplesPerChannel / frame.sampleRate) * 1000;
        const level = levelDbfs(pcm);
        playout.sample(10 ** (level / 20), performance.now());
        if (level < HEARD_DBFS) {
          quietMs += frameMs;
          // A bot that pauses for speech over it is yielding, not late.
          if (mouth.speaking) overlapped = true;
          if (quietMs >= GAP_MAX_MS) awaitingAudio = true;
          continue;
        }
        if (heardAny && quietMs > 0 && quietMs < GAP_MAX_MS && !overlapped) result.gapsMs.push(quietMs);
        heardAny = true;
        quietMs = 0;
        overlapped = false;
        if (awaitingAudio) {
          awaitingAudio = false;
          result.botUtterances.push({ firstAudio: performance.now(), bytes: 0 });
          const interruption = options.interruptAt?.(result.botUtterances.length, result.answers.length);
          if (interruption && !mouth.speaking)
            mouth.speaking = { pcm: interruption.pcm, offset: 0, startAt: performance.now() + interruption.afterMs, interruption: true };
        }
        result.botUtterances[result.botUtterances.length - 1]!.bytes += pcm.length;
        result.heardMs += (frame.samplesPerChannel / frame.sampleRate) * 1000;
      }
    })().catch(() => undefined);
  };
  room.on(RoomEvent.TrackSubscribed, (track) => listenTo(track));
  room.on(RoomEvent.Disconnected, () => {
    // After `ended` the bot leaves and the room is deleted while its last words may still be
    // arriving here: the end is the bot's, declared once they have played out (below).
    if (result.ended !== null && !hungUp) return;
    finish(hungUp ? 'hangup' : 'server');
  });
  room.on(RoomEvent.DataReceived, (payload, _p, _kind, topic) => {
    if (topic !== CONTROL_TOPIC) return;
    const msg = decodeControl(payload);
    if (!msg) return;
    result.messages.push(msg);
    const at = performance.now();
    if (msg.type === 'state') {
      result.states.push({ state: String(msg.state), at });
      options.onEvent?.(`state ${String(msg.state)}`);
    }
    if (msg.type === 'caption') {
      result.captions.push({ speaker: String(msg.speaker), text: String(msg.text), final: msg.final === true, at });
      if (msg.final === true) options.onEvent?.(`caption ${String(msg.speaker)}: ${String(msg.text)}`);
    }
    if (msg.type === 'ended') {
      result.ended = String(msg.reason);
      // The bot's answer to our hang-up can overtake the promise of the hang-up's own send.
      if (hungUp) finish('hangup');
      else {
        // The data channel overtakes the audio: like the respondent page, the end counts (and the
        // room is left) once the bot's closing words have played out here, not when `ended` arrives.
        const arrived = performance.now();
        const settle = setInterval(() => {
          if (!playout.done(arrived, performance.now())) return;
          clearInterval(settle);
          finish('ended');
        }, 50);
      }
    }
    if (msg.type === 'state' && msg.state === 'listening') {
      // The interruption still being said is the answer to this question.
      if (mouth.speaking?.interruption) return;
      turn++;
      const action = options.onListening?.(turn) ?? 'answer';
      if (action === 'hangup') {
        hungUp = true;
        // Like the respondent page: the room is left when the bot answers with `ended` (the handler
        // above), or HANGUP_ACK_MAX_MS after the send, not at once (the leave could overtake it).
        void room.localParticipant
          ?.publishData(encodeControl({ type: 'hangup' }), { reliable: true, topic: CONTROL_TOPIC })
          .then(() => setTimeout(() => finish('hangup'), HANGUP_ACK_MAX_MS));
      } else if (action === 'answer' && options.answers.length > 0) {
        const pcm = options.answers[Math.min(turn - 1, options.answers.length - 1)]!;
        mouth.speaking = { pcm, offset: 0, startAt: performance.now() + (options.reactionMs ?? 200) };
      }
    }
  });

  const started = performance.now();
  await room.connect(options.url, options.token, { autoSubscribe: true, dynacast: false });
  result.joinedAt = performance.now();
  result.connectMs = result.joinedAt - started;
  const track = LocalAudioTrack.createAudioTrack('microphone', source);
  await room.localParticipant!.publishTrack(track, new TrackPublishOptions({ source: TrackSource.SOURCE_MICROPHONE }));
  for (const p of room.remoteParticipants.values()) for (const pub of p.trackPublications.values()) if (pub.track) listenTo(pub.track);

  // The microphone: speech when answering, silence otherwise; captureFrame paces it in real time.
  const mic = (async () => {
    while (!stopped) {
      const frame = AudioFrame.create(RATE, 1, FRAME_SAMPLES);
      const speaking = mouth.speaking;
      if (speaking && performance.now() >= speaking.startAt) {
        if (speaking.offset === 0)
          result.answers.push({
            started: performance.now(),
            finished: performance.now(),
            ...(speaking.interruption ? { interruption: true } : {}),
          });
        const chunk = speaking.pcm.subarray(speaking.offset, speaking.offset + FRAME_SAMPLES * 2);
        Buffer.from(frame.data.buffer, frame.data.byteOffset, frame.data.byteLength).set(chunk);
        speaking.offset += chunk.length;
        if (speaking.offset >= speaking.pcm.length) {
          result.answers[result.answers.length - 1]!.finished = performance.now();
          mouth.speaking = null;
        }
      }
      options.onAudio?.(
        'respondent',
        Buffer.from(frame.data.buffer, frame.data.byteOffset, frame.data.byteLength),
        RATE,
        performance.now(),
      );
      await source.captureFrame(frame);
    }
  })().catch(() => undefined);

  const timer = setTimeout(() => finish('timeout'), options.timeoutMs ?? 120_000);
  await done;
  clearTimeout(timer);
  await mic;
  await room.disconnect().catch(() => undefined);
  await source.close().catch(() => undefined);
  return result;
}
