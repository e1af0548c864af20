import WebSocket from 'ws';

/**
 * A respondent in Node, speaking the local-room protocol (docs/local-room-protocol.md) like the
 * page does: it streams a microphone in real time (20 ms frames of 16 kHz PCM16, silence between
 * answers) and, each time the bot starts listening, speaks the next answer. It records a timeline
 * (performance.now() ms) from which the demo and the benchmark read latencies.
 */
const FRAME_MS = 20;
const FRAME_BYTES = (16_000 * FRAME_MS * 2) / 1000;

export interface RoomTimeline {
  opened: number;
  ready: number | null;
  ended: number | null;
  endReason: string | null;
  closeCode: number | null;
  outputSampleRate: number;
  /** Each bot utterance: when its first audio byte arrived, and how many bytes came. */
  botUtterances: Array<{ firstAudio: number; bytes: number }>;
  /** Each answer: when its first and last speech frames were sent. */
  answers: Array<{ started: number; finished: number }>;
  states: Array<{ state: string; at: number }>;
  captions: Array<{ speaker: string; text: string; final: boolean; at: number }>;
}

export interface RoomClientOptions {
  roomUrl: string;
  token: string;
  /** Each answer's PCM16 16 kHz samples, in order; the last one is repeated for extra questions. */
  answers: Buffer[];
  /** Silence before speaking once the bot listens (a person's reaction time). */
  reactionMs?: number;
  /** Hard stop for the whole interview. */
  timeoutMs?: number;
  /** For a wss: room behind a throwaway CA. */
  ca?: string;
  onEvent?: (line: string) => void;
  /** Every microphone frame as sent (16 kHz) and every piece of the bot's voice as received, e.g. for a ConversationRecorder. */
  onAudio?: (side: 'respondent' | 'bot', pcm: Buffer, sampleRate: number, at: number) => void;
}

export async function runRespondent(options: RoomClientOptions): Promise<RoomTimeline> {
  const url = new URL(options.roomUrl);
  url.searchParams.set('token', options.token);
  const now = (): number => performance.now();
  const timeline: RoomTimeline = {
    opened: now(),
    ready: null,
    ended: null,
    endReason: null,
    closeCode: null,
    outputSampleRate: 24_000,
    botUtterances: [],
    answers: [],
    states: [],
    captions: [],
  };
  const socket = new WebSocket(url, options.ca ? { ca: options.ca } : {});
  let nextAnswer = 0;
  let speaking: { pcm: Buffer; offset: number; startAt: number } | null = null;
  let awaitingAudio = true;
  let pump: NodeJS.Timeout | undefined;
  let framesSent = 0;
  let streamStart = 0;

  const sendFrames = (): void => {
    if (socket.readyState !== WebSocket.OPEN) return;
    const due = Math.floor((now() - streamStart) / FRAME_MS);
    while (framesSent < due) {
      framesSent++;
      let frame = Buffer.alloc(FRAME_BYTES);
      if (speaking && now() >= speaking.startAt) {
        const chunk = speaking.pcm.subarray(speaking.offset, speaking.offset + FRAME_BYTES);
        if (speaking.offset === 0) timeline.answers.push({ started: now(), finished: now() });
        frame = Buffer.concat([chunk, Buffer.alloc(FRAME_BYTES - chunk.length)]);
        speaking.offset += chunk.length;
        if (speaking.offset >= speaking.pcm.length) {
          timeline.answers[timeline.answers.length - 1]!.finished = now();
          speaking = null;
        }
      }
      socket.send(frame);
      options.onAudio?.('respondent', frame, 16_000, now());
    }
  };

  return new Promise<RoomTimeline>((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.terminate();
      reject(new Error(`the interview did not end within ${options.timeoutMs ?? 120_000} ms`));
    }, options.timeoutMs ?? 120_000);

    socket.on('message', (data, isBinary) => {
      if (isBinary) {
        const bytes = (data as Buffer).length;
        if (awaitingAudio) {
          awaitingAudio = false;
          timeline.botUtterances.push({ firstAudio: now(), bytes: 0 });
        }
        timeline.botUtterances[timeline.botUtterances.length - 1]!.bytes += bytes;
        options.onAudio?.('bot', data as Buffer, timeline.outputSampleRate, now());
        return;
      }
      const message = JSON.parse(String(data)) as Record<string, unknown>;
      switch (message.type) {
        case 'ready':
          timeline.ready = now();
          if (typeof message.outputSampleRate === 'number') timeline.outputSampleRate = message.outputSampleRate;
          streamStart = now();
          pump = setInterval(sendFrames, FRAME_MS / 2);
          break;
        case 'state':
          timeline.states.push({ state: String(message.state), at: now() });
          options.onEvent?.(`state ${String(message.state)}`);
          // Real language models may ask follow-ups: past the scripted answers, the last one is said again.
          if (message.state === 'listening' && !speaking && options.answers.length > 0) {
            // Like a person: answer once the interviewer's words have finished playing, then react.
            const last = timeline.botUtterances[timeline.botUtterances.length - 1];
            const playedOutAt = last ? last.firstAudio + (last.bytes / 2 / timeline.outputSampleRate) * 1000 : now();
            const pcm = options.answers[Math.min(nextAnswer++, options.answers.length - 1)]!;
            speaking = { pcm, offset: 0, startAt: Math.max(now(), playedOutAt) + (options.reactionMs ?? 300) };
          }
          break;
        case 'caption':
          timeline.captions.push({
            speaker: String(message.speaker),
            text: String(message.text),
            final: message.final === true,
            at: now(),
          });
          if (message.final === true) options.onEvent?.(`caption ${String(message.speaker)}: ${String(message.text)}`);
          break;
        case 'audio_end':
          awaitingAudio = true;
          break;
        case 'ended':
          timeline.ended = now();
          timeline.endReason = String(message.reason);
          break;
        default:
          break;
      }
    });
    socket.on('close', (code) => {
      clearTimeout(timer);
      clearInterval(pump);
      timeline.closeCode = code;
      timeline.ended ??= now();
      resolve(timeline);
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      clearInterval(pump);
      reject(err);
    });
  });
}
