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
  type RemoteParticipant,
  type RemoteTrack,
} from '@livekit/rtc-node';
import { CONTROL_TOPIC, decodeControl, encodeControl } from '../../../lib/room-control.ts';
import type { BotRoom } from '../bot-room.ts';
import { PacedOutbound, type OutboundItem } from '../paced-outbound.ts';
import { PacedBotRoom } from '../paced-bot-room.ts';
import { roleOf } from './tokens.ts';

/**
 * The bot in a LiveKit room (@livekit/rtc-node): its voice goes out through an AudioSource at the
 * text-to-speech rate, the respondent's microphone comes in through an AudioStream that LiveKit
 * resamples to the rate the pipeline listens at, and the local-room control messages (state,
 * caption, audio_end, ended; hangup back) travel as reliable data messages.
 *
 * WebRTC plays audio in real time while the pipeline hands over whole utterances at once, so audio
 * and control messages share one ordered queue (paced-outbound.ts; the AudioSource paces it): a
 * control message that follows audio goes out only once that audio has played out, and "listening"
 * or "ended" reach the respondent when the interviewer has audibly finished (what the local room's
 * page works out from its own buffer).
 */
export const LIVEKIT_OUTPUT_SAMPLE_RATE = 24_000;
export const LIVEKIT_INPUT_SAMPLE_RATE = 16_000;
/** The longest a closing room waits for queued words to play out. */
const DRAIN_LIMIT_MS = 15_000;
const HANGUP_GRACE_MS = 1500;
const LINGER_MS = 300;

class LiveKitBotRoom extends PacedBotRoom implements BotRoom {
  respondentPresent = false;
  private hungUp = false;
  protected readonly outbound = new PacedOutbound({ deliver: (item) => this.deliver(item) });
  private audioSincePlayout = false;
  private closing: Promise<void> | null = null;
  private readonly room: Room;
  private readonly source: AudioSource;

  constructor(room: Room, source: AudioSource) {
    super();
    this.room = room;
    this.source = source;
    room.on(RoomEvent.ParticipantConnected, (p) => this.onParticipant(p));
    room.on(RoomEvent.ParticipantDisconnected, (p) => {
      if (roleOf(p.identity) !== 'respondent') return;
      this.respondentPresent = false;
      // A hang-up is a data message followed by leaving; they travel on different channels, so
      // the leave may arrive first. A short grace lets the hang-up name the end.
      setTimeout(() => {
        if (!this.hungUp) this.emit('left');
      }, HANGUP_GRACE_MS);
    });
    room.on(RoomEvent.TrackSubscribed, (track, _publication, p) => this.onTrack(track, p));
    room.on(RoomEvent.DataReceived, (payload, p, _kind, topic) => {
      if (topic !== CONTROL_TOPIC || !p || roleOf(p.identity) !== 'respondent') return;
      if (decodeControl(payload)?.type !== 'hangup' || this.hungUp) return;
      this.hungUp = true;
      this.emit('hangup');
    });
    room.on(RoomEvent.Disconnected, () => {
      if (!this.closing) this.emit('closed');
    });
  }

  /** After connect: the respondent may have joined (and published) first. */
  adoptPresent(): void {
    for (const p of this.room.remoteParticipants.values()) {
      this.onParticipant(p);
      for (const publication of p.trackPublications.values()) if (publication.track) this.onTrack(publication.track, p);
    }
  }

  private onParticipant(p: RemoteParticipant): void {
    if (roleOf(p.identity) !== 'respondent' || this.respondentPresent) return;
    this.respondentPresent = true;
    this.emit('joined');
  }

  private readonly reading = new Set<string>();

  private onTrack(track: RemoteTrack, p: RemoteParticipant): void {
    if (track.kind !== TrackKind.KIND_AUDIO || roleOf(p.identity) !== 'respondent' || !track.sid || this.reading.has(track.sid)) return;
    this.reading.add(track.sid);
    const stream = new AudioStream(track, { sampleRate: LIVEKIT_INPUT_SAMPLE_RATE, numChannels: 1 });
    void (async () => {
      try {
        for await (const frame of stream) {
          // Copied: the frame's memory belongs to the stream.
          this.emit('audio', Buffer.from(frame.data.buffer.slice(frame.data.byteOffset, frame.data.byteOffset + frame.data.byteLength)));
        }
      } catch {
        // The track ended with the room; 'left' or 'closed' says why.
      } finally {
        this.reading.delete(track.sid!);
      }
    })();
  }

  sendControl(msg: Record<string, unknown>): void {
    this.outbound.push({ kind: 'control', msg });
  }

  sendAudio(pcm: Buffer): void {
    if (!this.closing) this.outbound.push({ kind: 'audio', pcm });
  }

  protected stopVoice(): void {
    this.source.clearQueue();
    this.audioSincePlayout = false;
    void this.room.localParticipant
      ?.publishData(encodeControl({ type: 'interrupt' }), { reliable: true, topic: CONTROL_TOPIC })
      .catch(() => undefined);
  }

  private async deliver(item: OutboundItem): Promise<void> {
    if (item.kind === 'audio') {
      const samples = new Int16Array(item.pcm.buffer.slice(item.pcm.byteOffset, item.pcm.byteOffset + (item.pcm.byteLength & ~1)));
      await this.source.captureFrame(new AudioFrame(samples, LIVEKIT_OUTPUT_SAMPLE_RATE, 1, samples.length));
      this.audioSincePlayout = true;
    } else if (item.kind === 'control') {
      if (this.audioSincePlayout) await this.source.waitForPlayout();
      this.audioSincePlayout = false;
      await this.room.localParticipant?.publishData(encodeControl(item.msg), { reliable: true, topic: CONTROL_TOPIC });
    }
  }

  close(): void {
    this.closing ??= this.shutdown();
  }

  whenClosed(): Promise<void> {
    return this.closing ?? Promise.resolve();
  }

  private async shutdown(): Promise<void> {
    // The closing words and the final `ended` go out first, within a bound (a pause no longer holds them).
    this.outbound.resume();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.outbound.whenDrained(), new Promise((r) => (timer = setTimeout(r, DRAIN_LIMIT_MS)))]);
    clearTimeout(timer);
    this.outbound.clear();
    // publishData resolves once the message is handed to the data channel, not delivered; leaving at
    // once can drop the last message (`ended`), and the respondent would see a lost room instead.
    await new Promise((r) => setTimeout(r, LINGER_MS));
    await this.room.disconnect().catch(() => undefined);
    await this.source.close().catch(() => undefined);
    this.emit('closed');
  }
}

/**
 * Joins with the bot's token and publishes its microphone track. `url` is LIVEKIT_URL; the room
 * name is in the token. Resolves once connected and published; the respondent may come later.
 */
export async function joinLiveKitRoom(url: string, token: string, timeoutMs: number): Promise<{ room: BotRoom; connectMs: number }> {
  const started = performance.now();
  const room = new Room();
  const source = new AudioSource(LIVEKIT_OUTPUT_SAMPLE_RATE, 1);
  const bot = new LiveKitBotRoom(room, source);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`LiveKit connect timed out after ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([room.connect(url, token, { autoSubscribe: true, dynacast: false }), deadline]);
    const connectMs = performance.now() - started;
    const track = LocalAudioTrack.createAudioTrack('interviewer', source);
    await Promise.race([
      room.localParticipant!.publishTrack(track, new TrackPublishOptions({ source: TrackSource.SOURCE_MICROPHONE })),
      deadline,
    ]);
    bot.adoptPresent();
    return { room: bot, connectMs };
  } catch (err) {
    await room.disconnect().catch(() => undefined);
    await source.close().catch(() => undefined);
    throw err;
  } finally {
    clearTimeout(timer);
  }
}
