import { loadConfig } from '../config.ts';
import { createProviders } from '../providers/index.ts';
import { createTranscriptStore } from '../transcripts/store.ts';
import { runInterview } from './interview.ts';
import type { BotJob, FromBot, Outcome, ToBot } from './messages.ts';
import { ATTR_ROOM_CONNECT_MS, ATTR_ROOM_PROVIDER, ATTR_SESSION_ID, SPAN_ROOM_CONNECT } from '../telemetry/names.ts';
import { joinBotRoom, prewarmRoomClient, type BotRoom } from './room-link.ts';

/**
 * A prewarmed bot: its own process, started by the worker with the same environment. It builds
 * its provider clients once, says `ready`, and runs one interview per `assign`. A crash here ends
 * only this session; the worker reports it and starts a fresh bot.
 */
const config = loadConfig(process.env);
const providers = createProviders(config);
const store = createTranscriptStore(config);
let stop = new AbortController();
let busy = false;

function send(msg: FromBot): void {
  process.send?.(msg);
}

async function run(job: BotJob): Promise<Outcome> {
  if (!job.botCanJoin) {
    return { status: 'failed', reason: 'room_transport_unsupported', message: `The bot cannot join ${job.roomProvider} rooms yet; use ROOM_PROVIDER=local.` };
  }
  let room: BotRoom;
  const startMs = Date.now();
  try {
    // A WebRTC connect (ICE, DTLS) takes longer than a WebSocket upgrade, and more under load.
    const joined = await joinBotRoom(job, job.roomProvider === 'local' ? 5000 : 15_000);
    room = joined.room;
    const attributes = { [ATTR_SESSION_ID]: job.sessionId, [ATTR_ROOM_PROVIDER]: job.roomProvider, [ATTR_ROOM_CONNECT_MS]: Math.round(joined.connectMs) };
    send({ type: 'span', sessionId: job.sessionId, span: { name: SPAN_ROOM_CONNECT, startMs, endMs: Date.now(), attributes } });
  } catch (err) {
    send({ type: 'span', sessionId: job.sessionId, span: { name: SPAN_ROOM_CONNECT, startMs, endMs: Date.now(), attributes: { [ATTR_SESSION_ID]: job.sessionId, [ATTR_ROOM_PROVIDER]: job.roomProvider }, error: (err as Error).message } });
    return { status: 'failed', reason: 'room_join_failed', message: `The bot could not join its room: ${(err as Error).message}` };
  }
  const outcome = await runInterview(job, {
    room,
    providers,
    store,
    stop: stop.signal,
    settings: {
      joinTimeoutSeconds: config.joinTimeoutSeconds,
      maxSessionSeconds: config.maxSessionSeconds,
      listen: { sampleRate: 16_000, ...config.vad, idleTimeoutSeconds: config.idleTimeoutSeconds },
    },
    emitSpan: (span) => send({ type: 'span', sessionId: job.sessionId, span }),
    emitLatency: (provider, operation, seconds) => send({ type: 'latency', provider, operation, seconds }),
  });
  // The closing words play out before the worker hears the outcome and deletes the room.
  await room.whenClosed();
  return outcome;
}

process.on('message', (msg: ToBot) => {
  if (msg.type === 'assign') {
    if (busy) return; // The supervisor never double-assigns; ignore rather than corrupt a session.
    busy = true;
    stop = new AbortController();
    void run(msg.job)
      .catch((err: unknown): Outcome => ({ status: 'failed', reason: 'bot_error', message: `The bot failed: ${(err as Error).message}` }))
      .then((outcome) => {
        busy = false;
        send({ type: 'finished', sessionId: msg.job.sessionId, outcome });
      });
  } else if (msg.type === 'stop') {
    stop.abort(msg.reason);
  }
});

// Signals sent to the whole process group (Ctrl-C, a group SIGTERM) must not cut a live interview:
// the worker drains and stops the bot itself over IPC, or kills it after its grace period.
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => {
  if (!busy) process.exit(0);
});

// The worker went away: nothing can receive our outcome any more.
process.on('disconnect', () => process.exit(0));
// Prewarm: the room client (for LiveKit, its native WebRTC library) loads before the first session.
await prewarmRoomClient(config.roomProvider);
send({ type: 'ready' });
