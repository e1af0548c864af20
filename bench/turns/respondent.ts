import WebSocket from 'ws';
import type { AnswerItem } from './answer-set.ts';
import { longestPause, type BotCaption, type BotEvent, type ItemPlay } from './metrics.ts';
import { Playback } from './playback.ts';

/**
 * The bench's respondent. Its microphone runs in real time: one 20 ms frame of 16 kHz PCM16 per
 * clock tick, silence between items. It answers once the bot listens and has audibly finished,
 * plus a reaction time; interruptions and backchannels start a fixed time into the bot's next
 * utterance as heard. It records what it said and what the bot did (metrics.ts).
 * `BenchRespondent` is that behaviour without a transport; `runBenchRespondent` puts it in a
 * local room (docs/local-room-protocol.md, over a real socket, the loudspeaker simulated by
 * playback.ts) and livekit-respondent.ts in a LiveKit room.
 */
export const FRAME_MS = 20;
export const FRAME_BYTES = (16_000 * FRAME_MS * 2) / 1000;
const MS_PER_BYTE = FRAME_MS / FRAME_BYTES;

export interface BenchRespondentOptions {
  roomUrl: string;
  token: string;
  /** What to say, in order: answers when the bot listens, interruptions/backchannels during its speech. */
  items: AnswerItem[];
  /** Interruptions and backchannels start this long after the bot's utterance is first heard. */
  duringAfterMs?: number;
  /** A person's reaction time after the bot has audibly finished. */
  reactionMs?: number;
  /** How long the bot must stay quiet after the respondent spoke before a stale `listening` counts. */
  settleMs?: number;
  /** How long to keep listening after the last item (the reply to it). */
  tailMs?: number;
  timeoutMs?: number;
  /** Called just before the respondent hangs up (the bot process still lives). */
  beforeHangup?: () => void;
}

export interface SessionTimeline {
  plays: ItemPlay[];
  events: BotEvent[];
  /** The bot's final captions (what it said), as they arrived. */
  captions: BotCaption[];
  /** Items the session ended before (the bot ran out of questions); should be 0. */
  unplayed: number;
  endReason: string | null;
}

const isDuring = (item: AnswerItem): boolean => item.kind === 'interruption' || item.kind === 'backchannel';

interface Speaking {
  item: AnswerItem;
  offset: number;
  speechStartAt: number;
  speechEndAt: number;
}

/**
 * What the respondent says and when, and what it heard, on the caller's clock (performance.now()
 * ms). The transport feeds it the bot's messages and audio, asks it for each microphone frame and
 * calls `decide` on every tick and message; `onDone` is called once it has nothing left to say.
 */
export class BenchRespondent {
  readonly plays: ItemPlay[] = [];
  readonly events: BotEvent[] = [];
  readonly captions: BotCaption[] = [];
  endReason: string | null = null;
  private readonly queue: AnswerItem[];
  private readonly duringAfterMs: number;
  private readonly reactionMs: number;
  private readonly settleMs: number;
  private readonly tailMs: number;
  private state: string | null = null;
  private listeningSince = -Infinity;
  private lastSpeechEnd = -Infinity;
  private current: Speaking | null = null;
  private scheduled: { item: AnswerItem; at: number } | null = null;
  private done = false;
  private readonly onDone: () => void;

  constructor(options: Pick<BenchRespondentOptions, 'items' | 'duringAfterMs' | 'reactionMs' | 'settleMs' | 'tailMs'>, onDone: () => void) {
    this.queue = [...options.items];
    this.duringAfterMs = options.duringAfterMs ?? 1000;
    this.reactionMs = options.reactionMs ?? 300;
    this.settleMs = options.settleMs ?? 2500;
    this.tailMs = options.tailMs ?? 5000;
    this.onDone = onDone;
  }

  /** Whether the microphone is saying something now (an item has started and not finished). */
  get talking(): boolean {
    return this.current !== null;
  }

  timeline(): SessionTimeline {
    return {
      plays: this.plays,
      events: this.events,
      captions: this.captions,
      unplayed: this.queue.length + (this.current ? 1 : 0) + (this.scheduled ? 1 : 0),
      endReason: this.endReason,
    };
  }

  /** The bot's audio arrived at `t`; `heardAt`: when a new utterance starts to be heard (else null). */
  botAudio(t: number, heardAt: number | null): void {
    this.events.push({ at: t, type: 'audio' });
    const next = this.queue[0];
    if (heardAt !== null && !this.current && !this.scheduled && next && isDuring(next))
      this.scheduled = { item: this.queue.shift()!, at: heardAt + this.duringAfterMs };
  }

  botState(state: 'speaking' | 'listening' | 'thinking', t: number): void {
    this.events.push({ at: t, type: state });
    this.state = state;
    if (state === 'listening') this.listeningSince = t;
  }

  botCaption(text: string, t: number): void {
    this.captions.push({ at: t, text });
  }

  botInterrupted(t: number): void {
    this.events.push({ at: t, type: 'interrupt' });
  }

  ended(reason: string): void {
    this.endReason = reason;
    this.done = true;
  }

  stop(): void {
    this.done = true;
  }

  /** The next frame of the microphone at `t` (its send time), stamped when it holds a speech edge. */
  nextFrame(t: number): Buffer {
    if (!this.current && this.scheduled && t >= this.scheduled.at) {
      this.start(this.scheduled.item);
      this.scheduled = null;
    }
    const frame = Buffer.alloc(FRAME_BYTES);
    const s = this.current;
    if (!s) return frame;
    s.item.pcm.copy(frame, 0, s.offset, Math.min(s.offset + FRAME_BYTES, s.item.pcm.length));
    const fromMs = s.offset * MS_PER_BYTE;
    const toMs = fromMs + FRAME_MS;
    if (s.item.speech.startMs >= fromMs && s.item.speech.startMs < toMs) s.speechStartAt = t;
    // The frame holding the last speech sample: its send time is when the bot can know speech ended.
    const last = s.item.speech.endMs - 0.01;
    if (last >= fromMs && last < toMs) s.speechEndAt = t;
    s.offset += FRAME_BYTES;
    if (s.offset >= s.item.pcm.length) {
      this.plays.push({
        id: s.item.id,
        kind: s.item.kind,
        speechStartAt: s.speechStartAt,
        speechEndAt: s.speechEndAt,
        longestPauseMs: longestPause(s.item.pauses),
        ...(s.item.heldOut ? { heldOut: true } : {}),
      });
      this.lastSpeechEnd = s.speechEndAt;
      this.current = null;
    }
    return frame;
  }

  private start(item: AnswerItem): void {
    this.current = { item, offset: 0, speechStartAt: NaN, speechEndAt: NaN };
  }

  /** What to say next, if anything; `quietSince`: when the bot's voice was last heard (or will end). */
  decide(t: number, quietSince: number): void {
    if (this.current || this.scheduled || this.done) return;
    const next = this.queue[0];
    if (!next) {
      if (t - this.lastSpeechEnd >= this.tailMs) {
        this.done = true;
        this.onDone();
      }
      return;
    }
    const quietFor = t - quietSince;
    const fresh = this.listeningSince > this.lastSpeechEnd; // the bot began listening after the respondent last spoke
    const settled = t - this.lastSpeechEnd >= this.settleMs;
    const listening = this.state === 'listening' && quietFor >= this.reactionMs && (fresh || settled);
    if (!isDuring(next)) {
      if (listening) this.start(this.queue.shift()!);
      return;
    }
    // A during item waits for the bot's next utterance. A bot that waits for an answer instead
    // (its question began while the respondent was still talking) gets the next answer first.
    if (listening && settled && quietFor >= this.settleMs) {
      const answer = this.queue.findIndex((i) => !isDuring(i));
      if (answer < 0) this.queue.shift();
      else this.start(this.queue.splice(answer, 1)[0]!);
    }
  }
}

/** The bench respondent in a local room, its loudspeaker simulated (playback.ts). */
export function runBenchRespondent(options: BenchRespondentOptions): Promise<SessionTimeline> {
  const now = (): number => performance.now();
  const url = new URL(options.roomUrl);
  url.searchParams.set('token', options.token);
  const ws = new WebSocket(url);
  const playback = new Playback();
  let streamStart = 0;
  let framesSent = 0;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const respondent = new BenchRespondent(options, () => {
    clearTimeout(timer);
    options.beforeHangup?.();
    ws.send(JSON.stringify({ type: 'hangup' }));
    ws.close(1000);
  });

  const tick = (): void => {
    if (closed || ws.readyState !== WebSocket.OPEN) return;
    const due = Math.floor((now() - streamStart) / FRAME_MS) + 1;
    while (framesSent < due) {
      framesSent++;
      ws.send(respondent.nextFrame(now()));
    }
    respondent.decide(now(), playback.endsAt);
    timer = setTimeout(tick, Math.max(1, streamStart + framesSent * FRAME_MS - now()));
  };

  return new Promise<SessionTimeline>((resolve, reject) => {
    const deadline = setTimeout(() => {
      closed = true;
      respondent.stop();
      clearTimeout(timer);
      ws.terminate();
      const t = respondent.timeline();
      reject(
        new Error(
          `the bench session did not finish within ${options.timeoutMs ?? 600_000} ms: ${t.unplayed} items left, ${t.plays.length} played`,
        ),
      );
    }, options.timeoutMs ?? 600_000);
    ws.on('error', (err) => {
      clearTimeout(deadline);
      reject(err);
    });
    ws.on('close', () => {
      closed = true;
      respondent.stop();
      clearTimeout(timer);
      clearTimeout(deadline);
      resolve(respondent.timeline());
    });
    ws.on('message', (data, isBinary) => {
      const t = now();
      if (isBinary) {
        respondent.botAudio(t, playback.push((data as Buffer).length, t));
        return;
      }
      const msg = JSON.parse(data.toString()) as {
        type?: string;
        state?: string;
        reason?: string;
        speaker?: string;
        text?: string;
        final?: boolean;
      };
      if (msg.type === 'ready' && streamStart === 0) {
        streamStart = t;
        tick();
      } else if (msg.type === 'state' && (msg.state === 'speaking' || msg.state === 'listening' || msg.state === 'thinking')) {
        respondent.botState(msg.state, t);
        if (msg.state === 'speaking') playback.utteranceStarts();
      } else if (msg.type === 'caption' && msg.speaker === 'bot' && msg.final === true) {
        respondent.botCaption(String(msg.text), t);
      } else if (msg.type === 'interrupt') {
        respondent.botInterrupted(t);
        playback.drop(t);
      } else if (msg.type === 'ended') {
        respondent.ended(String(msg.reason));
      }
      respondent.decide(t, playback.endsAt);
    });
  });
}
