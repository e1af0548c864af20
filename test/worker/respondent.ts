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

export interface Respondent {
  done: Promise<RespondentResult>;
  socket: WebSocket;
  /** Speaks now (speech then silence), e.g. after staying silent at a `listening`. */
  say(text: string): void;
}

export function runRespondent(roomUrl: string, token: string, options: RespondentOptions = {}): Respondent {
  const ws = new WebSocket(`${roomUrl}?token=${encodeURIComponent(token)}`, { rejectUnauthorized: options.rejectUnauthorized ?? true, ...(options.ca ? { ca: options.ca } : {}) });
  const messages: Array<Record<string, unknown>> = [];
  let audioBytes = 0;
  let firstAudioMs: number | null = null;
  const opened = Date.now();
  let turn = 0;
  const speak = hasEspeak();
  const say = (text: string) => {
    const pcm = Buffer.concat([speak ? speechPcm(text, 16_000) : tonePcm(600, 16_000), silencePcm(options.silenceMs ?? 600, 16_000)]);
    for (let i = 0; i < pcm.length; i += FRAME) ws.send(pcm.subarray(i, i + FRAME));
  };
  const done = new Promise<RespondentResult>((resolve, reject) => {
    ws.on('error', reject);
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        audioBytes += (data as Buffer).length;
        firstAudioMs ??= Date.now() - opened;
        return;
      }
      const msg = JSON.parse(data.toString()) as Record<string, unknown>;
      messages.push(msg);
      if (msg.type === 'state' && msg.state === 'listening') {
        turn++;
        if (options.maxTurns !== undefined && turn > options.maxTurns) return;
        const action = options.onListening?.(turn) ?? 'answer';
        if (action === 'hangup') return void ws.send(JSON.stringify({ type: 'hangup' }));
        if (action === 'silent') return;
        const answers = options.answers ?? ['yes, I liked it'];
        say(answers[Math.min(turn - 1, answers.length - 1)]!);
      }
    });
    ws.on('close', (code) => {
      const ended = messages.find((m) => m.type === 'ended');
      resolve({ messages, audioBytes, firstAudioMs, closeCode: code, ended: ended ? String(ended.reason) : null });
    });
  });
  return { done, socket: ws, say };
}
