import WebSocket from 'ws';
import type { AnswerItem } from './answer-set.ts';
import { longestPause, type BotEvent, type ItemPlay } from './metrics.ts';
import { Playback } from './playback.ts';

/**
 * The bench's respondent in a local room (docs/local-room-protocol.md, over a real socket). Its
 * microphone runs in real time: one 20 ms frame of 16 kHz PCM16 per clock tick, silence between
 * items. Its loudspeaker is simulated (playback.ts). It answers once the bot listens and has
 * audibly finished, plus a reaction time; interruptions and backchannels start a fixed time into
 * the bot's next utterance as heard. It records what it said and what the bot did (metrics.ts).
 */
const FRAME_MS = 20;
const FRAME_BYTES = (16_000 * FRAME_MS * 2) / 1000;
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

export function runBenchRespondent(options: BenchRespondentOptions): Promise<SessionTimeline> {
  const duringAfterMs = options.duringAfterMs ?? 1000;
  const reactionMs = options.reactionMs ?? 300;
  const settleMs = options.settleMs ?? 2500;
  const tailMs = options.tailMs ?? 5000;
  const now = (): number => performance.now();
  const url = new URL(options.roomUrl);
  url.searchParams.set('token', options.token);
  const ws = new WebSocket(url);
  const queue = [...options.items];
  const plays: ItemPlay[] = [];
  const events: BotEvent[] = [];
  const playback = new Playback();
  let botState: string | null = null;
  let listeningSince = -Infinity;
  let lastSpeechEnd = -Infinity;
  let current: Speaking | null = null;
  let scheduled: { item: AnswerItem; at: number } | null = null;
  let endReason: string | null = null;
  let streamStart = 0;
  let framesSent = 0;
  let timer: NodeJS.Timeout | undefined;
  let done = false;

  const start = (item: AnswerItem): void => {
    current = { item, offset: 0, speechStartAt: NaN, speechEndAt: NaN };
  };

  /** The next frame of the microphone, stamped with its send time when it holds a speech edge. */
  const nextFrame = (t: number): Buffer => {
    if (!current && scheduled && t >= scheduled.at) {
      start(scheduled.item);
      scheduled = null;
    }
    if (!current) return Buffer.alloc(FRAME_BYTES);
    const s = current;
    const frame = Buffer.alloc(FRAME_BYTES);
    s.item.pcm.copy(frame, 0, s.offset, Math.min(s.offset + FRAME_BYTES, s.item.pcm.length));
    const fromMs = s.offset * MS_PER_BYTE;
    const toMs = fromMs + FRAME_MS;
    if (s.item.speech.startMs >= fromMs && s.item.speech.startMs < toMs) s.speechStartAt = t;
    // The frame holding the last speech sample: its send time is when the bot can know speech ended.
    const last = s.item.speech.endMs - 0.01;
    if (last >= fromMs && last < toMs) s.speechEndAt = t;
    s.offset += FRAME_BYTES;
    if (s.offset >= s.item.pcm.length) {
      plays.push({ id: s.item.id, kind: s.item.kind, speechStartAt: s.speechStartAt, speechEndAt: s.speechEndAt, longestPauseMs: longestPause(s.item.pauses) });
      lastSpeechEnd = s.speechEndAt;
      current = null;
    }
    return frame;
  };

  /** What to say next, if anything: called on every tick and every message. */
  const decide = (t: number): void => {
    if (current || scheduled || done) return;
    const next = queue[0];
    if (!next) {
      if (t - lastSpeechEnd >= tailMs) finish();
      return;
    }
    const quietFor = t - playback.endsAt;
    const fresh = listeningSince > lastSpeechEnd; // the bot began listening after the respondent last spoke
    const settled = t - lastSpeechEnd >= settleMs;
    const listening = botState === 'listening' && quietFor >= reactionMs && (fresh || settled);
    if (!isDuring(next)) {
      if (listening) start(queue.shift()!);
      return;
    }
    // A during item waits for the bot's next utterance. A bot that waits for an answer instead
    // (its question began while the respondent was still talking) gets the next answer first.
    if (listening && settled && quietFor >= settleMs) {
      const answer = queue.findIndex((i) => !isDuring(i));
      if (answer < 0) queue.shift();
      else start(queue.splice(answer, 1)[0]!);
    }
  };

  const tick = (): void => {
    if (done || ws.readyState !== WebSocket.OPEN) return;
    const due = Math.floor((now() - streamStart) / FRAME_MS) + 1;
    while (framesSent < due) {
      framesSent++;
      ws.send(nextFrame(now()));
    }
    decide(now());
    timer = setTimeout(tick, Math.max(1, streamStart + framesSent * FRAME_MS - now()));
  };

  let finish: () => void = () => undefined;
  return new Promise<SessionTimeline>((resolve, reject) => {
    const deadline = setTimeout(() => {
      done = true;
      clearTimeout(timer);
      ws.terminate();
      reject(new Error(`the bench session did not finish within ${options.timeoutMs ?? 600_000} ms: ${queue.length} items left, bot state ${botState}, ${plays.length} played`));
    }, options.timeoutMs ?? 600_000);
    finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      options.beforeHangup?.();
      ws.send(JSON.stringify({ type: 'hangup' }));
      ws.close(1000);
    };
    ws.on('error', (err) => {
      clearTimeout(deadline);
      reject(err);
    });
    ws.on('close', () => {
      done = true;
      clearTimeout(timer);
      clearTimeout(deadline);
      resolve({ plays, events, unplayed: queue.length + (current ? 1 : 0) + (scheduled ? 1 : 0), endReason });
    });
    ws.on('message', (data, isBinary) => {
      const t = now();
      if (isBinary) {
        events.push({ at: t, type: 'audio' });
        const heardAt = playback.push((data as Buffer).length, t);
        if (heardAt !== null && !current && !scheduled && queue[0] && isDuring(queue[0])) scheduled = { item: queue.shift()!, at: heardAt + duringAfterMs };
        return;
      }
      const msg = JSON.parse(data.toString()) as { type?: string; state?: string; reason?: string };
      if (msg.type === 'ready' && streamStart === 0) {
        streamStart = t;
        tick();
      } else if (msg.type === 'state' && (msg.state === 'speaking' || msg.state === 'listening' || msg.state === 'thinking')) {
        events.push({ at: t, type: msg.state });
        botState = msg.state;
        if (msg.state === 'listening') listeningSince = t;
        if (msg.state === 'speaking') playback.utteranceStarts();
      } else if (msg.type === 'interrupt') {
        events.push({ at: t, type: 'interrupt' });
        playback.drop(t);
      } else if (msg.type === 'ended') {
        endReason = String(msg.reason);
        done = true;
      }
      decide(t);
    });
  });
}
