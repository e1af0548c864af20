import { PcmPlayer } from './playback.ts';
import type { BotState, JoinInput, Room } from './room.ts';

/**
 * Joins a worker's `local` room (docs/local-room-protocol.md): microphone up as PCM16 at 16 kHz in
 * 20 ms frames, the bot's voice down as PCM16 at `outputSampleRate`, JSON control frames beside.
 */
const CLOSE_REASONS: Record<number, { code: string; message: string; retryable: boolean }> = {
  4401: {
    code: 'room_token_refused',
    message: 'The interview room refused this link. Reload the page to get a fresh one.',
    retryable: true,
  },
  4404: { code: 'room_not_found', message: 'This interview room no longer exists.', retryable: false },
  4409: { code: 'already_joined', message: 'This interview is already open in another window or tab.', retryable: false },
  1011: { code: 'worker_fault', message: 'The interviewer stopped because of a fault. Please try again.', retryable: true },
};

export async function joinLocalRoom(input: JoinInput): Promise<Room> {
  const { events } = input;
  const url = new URL(input.roomUrl);
  url.searchParams.set('token', input.token);

  const playbackContext = new AudioContext({ latencyHint: 'interactive' });
  const captureContext = new AudioContext({ latencyHint: 'interactive' });
  // allow="autoplay" on the iframe, and the Start click, let these resume.
  await Promise.all([playbackContext.resume(), captureContext.resume()]);
  await captureContext.audioWorklet.addModule(new URL('capture-worklet.js', import.meta.url).toString());
  const micSource = captureContext.createMediaStreamSource(input.microphone);
  const capture = new AudioWorkletNode(captureContext, 'pcm16-capture', { numberOfInputs: 1, numberOfOutputs: 0 });
  micSource.connect(capture);

  const player = new PcmPlayer(playbackContext);
  let outputRate = 24_000;
  let joined = false;
  let ended = false;
  let awaitingFirstAudio = true;

  const socket = new WebSocket(url.toString());
  socket.binaryType = 'arraybuffer';

  capture.port.onmessage = (message: MessageEvent<ArrayBuffer>) => {
    if (joined && socket.readyState === WebSocket.OPEN) socket.send(message.data);
  };

  // After a normal end the interviewer's last words play out; after a fault or a hang-up they stop.
  const teardown = (playOut: boolean): void => {
    capture.port.onmessage = null;
    micSource.disconnect();
    capture.disconnect();
    void captureContext.close();
    if (!playOut) player.stop();
    setTimeout(() => void playbackContext.close(), Math.ceil(player.queuedSeconds * 1000) + 100);
  };

  // The bot says "listening" as soon as it has sent its last audio, which may still be playing here:
  // the respondent is told it is their turn only when the interviewer has audibly finished. Every
  // other state is still reported, in order: it first flushes a deferred "listening".
  // An `interrupt` (the bot paused for speech over it) holds a deferred "listening" with no timer:
  // after a backchannel the interviewer says "speaking" again (it never stopped, here), its words go
  // on, and `resume` times the held "listening" again behind them.
  let pendingListening: { timer?: ReturnType<typeof setTimeout>; held?: boolean } | undefined;
  const flushListening = (): void => {
    if (pendingListening === undefined) return;
    clearTimeout(pendingListening.timer);
    pendingListening = undefined;
    events.onState('listening');
  };
  const deferListening = (): void => {
    const waitMs = Math.round(player.queuedSeconds * 1000);
    if (waitMs <= 0) return flushListening();
    clearTimeout(pendingListening?.timer);
    pendingListening = { timer: setTimeout(flushListening, waitMs) };
  };
  const announce = (state: BotState): void => {
    if (state === 'speaking' && pendingListening?.held) return;
    // A newer "listening" replaces one still waiting: the respondent is told once, at the end.
    if (state === 'listening') {
      clearTimeout(pendingListening?.timer);
      pendingListening = {};
      return deferListening();
    }
    flushListening();
    events.onState(state);
  };

  socket.onmessage = (message: MessageEvent<ArrayBuffer | string>) => {
    if (typeof message.data !== 'string') {
      player.push(message.data, outputRate);
      if (awaitingFirstAudio) {
        awaitingFirstAudio = false;
        events.onBotAudio();
      }
      return;
    }
    let control: Record<string, unknown>;
    try {
      control = JSON.parse(message.data) as Record<string, unknown>;
    } catch {
      return; // A frame we cannot read is ignored, as unknown message types are.
    }
    switch (control.type) {
      case 'ready':
        if (typeof control.outputSampleRate === 'number' && control.outputSampleRate > 0) outputRate = control.outputSampleRate;
        joined = true;
        events.onJoined();
        break;
      case 'state':
        if (control.state === 'speaking' || control.state === 'listening' || control.state === 'thinking')
          announce(control.state as BotState);
        break;
      case 'caption':
        if ((control.speaker === 'bot' || control.speaker === 'respondent') && typeof control.text === 'string') {
          events.onCaption({ speaker: control.speaker, text: control.text, final: control.final === true });
        }
        break;
      case 'audio_end':
        awaitingFirstAudio = true;
        break;
      case 'interrupt':
        // The respondent cut in: what the interviewer had queued here is dropped at once.
        player.stop();
        awaitingFirstAudio = true;
        if (pendingListening) {
          clearTimeout(pendingListening.timer);
          pendingListening = { held: true };
        }
        events.onInterrupted();
        break;
      case 'resume':
        // The pause was a backchannel and the words went on (or it was an interruption and none
        // follow): a held "listening" shows once what was sent since has played.
        if (pendingListening) deferListening();
        break;
      case 'ended': {
        flushListening();
        ended = true;
        const reason = typeof control.reason === 'string' ? control.reason : 'completed';
        // The page says the interview is over once the closing words have been heard.
        setTimeout(() => events.onEnded(reason), Math.round(player.queuedSeconds * 1000));
        break;
      }
      default:
        break;
    }
  };

  socket.onclose = (close) => {
    clearTimeout(pendingListening?.timer);
    teardown(ended && !leftByUser);
    if (ended) return;
    ended = true;
    if (close.code === 1000) return events.onEnded('completed');
    const known = CLOSE_REASONS[close.code];
    events.onError(
      known ?? {
        code: 'connection_lost',
        message: 'The connection to the interviewer was lost. Check your network and try again.',
        retryable: true,
      },
    );
  };

  let leftByUser = false;
  return {
    leave() {
      leftByUser = true;
      if (socket.readyState === WebSocket.OPEN) {
        socket.send(JSON.stringify({ type: 'hangup' }));
        ended = true;
        socket.close(1000, 'respondent left');
      }
    },
  };
}
