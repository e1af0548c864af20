import { readConfig } from './config.ts';
import { connect, isRoomError } from './connect.ts';
import { createHostBridge } from './host-bridge.ts';
import { joinLocalRoom } from './local-room.ts';
import { roomKind, type JoinInput, type Room, type RoomError, type RoomEvents } from './room.ts';
import { createView } from './view.ts';

/**
 * The respondent page's controller: Start → microphone → connect → join the room → follow the
 * bot's turns → finished (or an error with Retry where retrying can help). Every step is also
 * reported to the host page (host-bridge.ts) and recorded in `window.__serviceTimeline` with
 * performance.now() times, which the end-to-end test and the benchmark read.
 */
type Mark = { name: string; at: number };
declare global {
  interface Window {
    __serviceTimeline: Mark[];
  }
}

const config = readConfig(document, window.location);
const view = createView(document);
const host = createHostBridge(window, config.sessionId);
window.__serviceTimeline = [];
const mark = (name: string): void => {
  window.__serviceTimeline.push({ name, at: performance.now() });
};

let room: Room | null = null;
let microphone: MediaStream | null = null;
let over = false;

const fail = (error: RoomError): void => {
  mark(`error:${error.code}`);
  view.set('error', error.message);
  view.showRetry(error.retryable);
  host.send('service:error', { code: error.code, message: error.message, retryable: error.retryable });
};

const finish = (reason: string): void => {
  if (over) return;
  over = true;
  mark(`ended:${reason}`);
  microphone?.getTracks().forEach((t) => t.stop());
  microphone = null;
  if (reason === 'completed' || reason === 'hangup') {
    view.set('finished', reason === 'hangup' ? 'You left the interview. Thank you for your time.' : undefined);
    host.send('service:completed', { reason });
  } else {
    // The session stays open after a failure: Try again connects anew and the service starts a
    // fresh interviewer for a new attempt (docs/connect.md).
    view.set('failed', reason === 'timeout' ? 'The interview timed out. Press Try again to start over.' : undefined);
    view.showRetry(true);
    host.send('service:failed', { reason, retryable: true });
  }
};

const roomEvents: RoomEvents = {
  onJoined: () => {
    mark('room:joined');
    view.set('thinking', 'The interviewer is about to start.');
    host.send('service:started');
  },
  onState: (state) => {
    if (over) return;
    mark(`state:${state}`);
    view.set(state);
    host.send(state === 'speaking' ? 'service:speaking' : state === 'listening' ? 'service:listening' : 'service:thinking');
  },
  onCaption: (caption) => {
    if (caption.final) mark(`caption:${caption.speaker}`);
    view.caption(caption);
  },
  onBotAudio: () => mark('bot:first_audio'),
  onInterrupted: () => mark('bot:interrupted'),
  onEnded: finish,
  onError: (error) => {
    room = null;
    if (!over) fail(error);
  },
};

async function getMicrophone(): Promise<MediaStream | RoomError> {
  if (!navigator.mediaDevices?.getUserMedia) {
    return {
      code: 'microphone_unsupported',
      message: 'This browser cannot use a microphone here. Open the page over HTTPS in a current browser.',
      retryable: false,
    };
  }
  try {
    return await navigator.mediaDevices.getUserMedia({
      audio: { echoCancellation: true, noiseSuppression: true, channelCount: 1 },
      video: false,
    });
  } catch (err) {
    const name = err instanceof DOMException ? err.name : '';
    if (name === 'NotAllowedError' || name === 'SecurityError') {
      return {
        code: 'microphone_denied',
        message: 'Microphone access was blocked. Allow it in your browser (the icon in the address bar), then press Try again.',
        retryable: true,
      };
    }
    return {
      code: 'microphone_unavailable',
      message: 'No working microphone was found. Connect one, then press Try again.',
      retryable: true,
    };
  }
}

async function begin(): Promise<void> {
  view.set('microphone');
  mark('microphone:asked');
  const mic = microphone ?? (await getMicrophone());
  if (!(mic instanceof MediaStream)) return fail(mic);
  microphone = mic;

  view.set('connecting');
  mark('connect:start');
  host.send('service:connecting');
  const answer = await connect(config);
  if (isRoomError(answer)) return fail(answer);
  mark(`connect:done:${answer.route}`);

  const input: JoinInput = { roomUrl: answer.room_url, token: answer.token, microphone: mic, events: roomEvents };
  try {
    const kind = roomKind(answer);
    if (kind === 'local') {
      room = await joinLocalRoom(input);
    } else if (kind === 'daily' || kind === 'livekit') {
      // WebRTC room clients are large: each is loaded only for sessions that need it.
      const url = new URL(`${kind}-room.js`, import.meta.url).toString();
      const module = (await import(url)) as Record<string, (input: JoinInput) => Promise<Room>>;
      room = await module[kind === 'daily' ? 'joinDailyRoom' : 'joinLiveKitRoom']!(input);
    } else {
      return fail({ code: 'room_unsupported', message: 'The interview room has an address this page cannot open.', retryable: false });
    }
  } catch (err) {
    return fail({
      code: 'room_join_failed',
      message: `Could not join the interview room${err instanceof Error ? `: ${err.message}` : ''}.`,
      retryable: true,
    });
  }
}

view.onStart(() => void begin());
view.onRetry(() => {
  over = false;
  void begin();
});
view.onLeave(() => {
  room?.leave();
  finish('hangup');
});
host.onCommand((command) => {
  if (command === 'service:hangup') {
    room?.leave();
    finish('hangup');
  }
});
window.addEventListener('pagehide', () => room?.leave());

if (config.publishableKey === null && config.sessionToken === null) {
  over = true;
  view.set('closed', 'Open this interview from the app or site that invited you.');
} else if (config.status === 'COMPLETED' || config.status === 'EXPIRED') {
  over = true;
  view.set(
    'closed',
    config.status === 'COMPLETED' ? 'This interview was already completed. Thank you!' : 'This interview link has expired.',
  );
} else {
  view.set('ready');
  host.send('service:ready');
}
