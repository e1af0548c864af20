import WebSocket from 'ws';
import { silencePcm, speechPcm, tonePcm, hasEspeak } from '../fakes/audio.ts';

/**
 * A scripted respondent for local rooms (docs/local-room-protocol.md): joins with the token,
 * collects the bot's audio and control messages, and answers each `listening` state with speech
 * (espeak-ng at 16 kHz, or a tone) followed by silence, so the worker's VAD ends the turn.
 */
export interface RespondentOptions {
  /** What to say per turn; a turn beyond the list is answered with the last entry. */
  answers?: string[];
  /** Silence after each answer (must exceed the worker's VAD_SILENCE_MS). */
  silenceMs?: number;
  /** Stop answering after this many turns (to test idle timeouts or hang-ups). */
  maxTurns?: number;
  /** Called at each `listening`; return 'hangup' to hang up instead of answering. */
  onListening?: (turn: number) => 'answer' | 'hangup' | 'silent';
  rejectUnauthorized?: boolean;
  ca?: Buffer;
  /** Send audio at real-time pace (20 ms frames on a clock) instead of as fast as the socket takes it. */
  realTime?: boolean;
}

export interface RespondentResult {
  messages: Array<Record<string, unknown>>;
  audioBytes: number;
  /** Time from join to the first audio byte. */
  firstAudioMs: number | null;
  closeCode: number;
  ended: string | null;
}

const FRAME = 640; // 20 ms at 16 kHz
/** How long a real-time respondent takes to start answering once the bot has finished. */
const REACTION_MS = 300;

export interface Respondent {
  done: Promise<RespondentResult>;
  socket: WebSocket;
  /** Speaks now (speech then silence), e.g. after staying silent at a `listening`. */
  say(text: string): void;
  /** Sends these samples (16 kHz PCM16), paced like the rest; resolves when the last frame is out. */
  send(pcm: Buffer): Promise<void>;
}

export function runRespondent(roomUrl: string, token: string, options: RespondentOptions = {}): Respondent {
  const ws = new WebSocket(`${roomUrl}?token=${encodeURIComponent(token)}`, {
    rejectUnauthorized: options.rejectUnauthorized ?? true,
    ...(options.ca ? { ca: options.ca } : {}),
  });
  const messages: Array<Record<string, unknown>> = [];
  let audioBytes = 0;
  let firstAudioMs: number | null = null;
  const opened = Date.now();
  let turn = 0;
  let playingUntil = 0;
  let answerTimer: NodeJS.Timeout | undefined;
  const speak = hasEspeak();
  // Real time: like a microphone, a frame goes out every 20 ms from the join to the end, silence
  // when nothing is being said, so pauses last as long as they sound.
  const queue: Array<{ frame: Buffer; last?: () => void }> = [];
  const silentFrame = Buffer.alloc(FRAME);
  let clock: NodeJS.Timeout | undefined;
  const startMicrophone = () => {
    const started = performance.now();
    let n = 0;
    const tick = () => {
      if (ws.readyState !== WebSocket.OPEN) return;
      for (; started + n * 20 <= performance.now(); n++) {
        const item = queue.shift();
        ws.send(item?.frame ?? silentFrame);
        item?.last?.();
      }
      clock = setTimeout(tick, Math.max(1, started + n * 20 - performance.now()));
    };
    tick();
  };
  const send = (pcm: Buffer): Promise<void> => {
    if (!options.realTime) {
      for (let i = 0; i < pcm.length; i += FRAME) ws.send(pcm.subarray(i, i + FRAME));
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      for (let i = 0; i < pcm.length; i += FRAME)
        queue.push({ frame: pcm.subarray(i, i + FRAME), ...(i + FRAME >= pcm.length ? { last: resolve } : {}) });
      if (pcm.length === 0) resolve();
    });
  };
  const say = (text: string) => {
    void send(Buffer.concat([speak ? speechPcm(text, 16_000) : tonePcm(600, 16_000), silencePcm(options.silenceMs ?? 600, 16_000)]));
  };
  const done = new Promise<RespondentResult>((resolve, reject) => {
    ws.on('error', reject);
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        audioBytes += (data as Buffer).length;
        firstAudioMs ??= Date.now() - opened;
        // The bot's voice plays in real time from its arrival (24 kHz PCM16: 48 bytes a millisecond).
        playingUntil = Math.max(playingUntil, performance.now()) + (data as Buffer).length / 48;
        return;
      }
      const msg = JSON.parse(data.toString()) as Record<string, unknown>;
      messages.push(msg);
      if (msg.type === 'interrupt') playingUntil = performance.now();
      // In real time, a respondent answers once the question has been heard (as the page says);
      // a bot that speaks again (it went on after an "mm-hm") is listened to first.
      if (options.realTime && msg.type === 'state') clearTimeout(answerTimer);
      if (msg.type === 'state' && msg.state === 'listening') {
        if (!options.realTime) return onListening();
        const answerWhenHeard = (): void => {
          const left = playingUntil - performance.now();
          answerTimer = setTimeout(left > 0 ? answerWhenHeard : onListening, left > 0 ? left : REACTION_MS);
        };
        answerWhenHeard();
      }
    });
    const onListening = () => {
      turn++;
      if (options.maxTurns !== undefined && turn > options.maxTurns) return;
      const action = options.onListening?.(turn) ?? 'answer';
      if (action === 'hangup') return void ws.send(JSON.stringify({ type: 'hangup' }));
      if (action === 'silent') return;
      const answers = options.answers ?? ['yes, I liked it'];
      say(answers[Math.min(turn - 1, answers.length - 1)]!);
    };
    if (options.realTime) ws.once('open', startMicrophone);
    ws.on('close', (code) => {
      clearTimeout(clock);
      const ended = messages.find((m) => m.type === 'ended');
      resolve({ messages, audioBytes, firstAudioMs, closeCode: code, ended: ended ? String(ended.reason) : null });
    });
  });
  return { done, socket: ws, say, send };
}

/** Resolves at the respondent's first `listening`: the bot has greeted and asked, the interview is live. */
export function firstListening(respondent: Respondent): Promise<void> {
  return new Promise((resolve) => {
    const onMessage = (data: Buffer, isBinary: boolean) => {
      if (isBinary) return;
      const msg = JSON.parse(data.toString()) as { type?: string; state?: string };
      if (msg.type === 'state' && msg.state === 'listening') {
        respondent.socket.off('message', onMessage);
        resolve();
      }
    };
    respondent.socket.on('message', onMessage);
  });
}
