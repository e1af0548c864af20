import { createLogger } from '../../lib/log.ts';
import { loadConfig } from '../config.ts';
import { createProviders } from '../providers/index.ts';
import { createTranscriptStore } from '../transcripts/store.ts';
import { runInterview } from './interview.ts';
import { loadTurnModels } from './turns/models.ts';
import type { BotJob, FromBot, Outcome, ToBot } from './messages.ts';
import { DailyRoomJoiner } from '../rooms/daily/bot-room.ts';
import { ATTR_ROOM_CONNECT_MS, ATTR_ROOM_PROVIDER, ATTR_SESSION_ID, SPAN_ROOM_CONNECT } from '../telemetry/names.ts';
import { joinBotRoom, prewarmRoomClient, type BotRoom } from './room-link.ts';
import { FailureReason } from '../../lib/failure-reasons.ts';

/**
 * A prewarmed bot: its own process, started by the worker with the same environment. It builds
 * its provider clients once, says `ready`, and runs one interview per `assign`. A crash here ends
 * only this session; the worker reports it and starts a fresh bot.
 */
const config = loadConfig(process.env);
const providers = createProviders(config);
const store = createTranscriptStore(config);
// Daily rooms: the bridge process starts with the bot, so a session's join does not wait for it.
const dailyRooms = config.daily ? new DailyRoomJoiner({ python: config.daily.bridgePython }) : null;
const log = createLogger({ name: 'bot' });
let streamingNoticed = false;
// The turn models load with the bot (prewarm), not at its first turn.
const models = await loadTurnModels(config.turns);
let stop = new AbortController();
let busy = false;
/** Set when a session pushed this process to hold a lot of audio: it exits after the session. */
let recycle = false;
const RECYCLE_RSS_BYTES = 512 * 1024 * 1024;

function send(msg: FromBot): void {
  process.send?.(msg);
}

async function run(job: BotJob): Promise<Outcome> {
  let room: BotRoom;
  const startMs = Date.now();
  try {
    // A WebRTC connect (ICE, DTLS) takes longer than a WebSocket upgrade, and more under load.
    const joined = await joinBotRoom(job, dailyRooms, job.roomProvider === 'local' ? 5000 : 15_000);
    room = joined.room;
    const attributes = { [ATTR_SESSION_ID]: job.sessionId, [ATTR_ROOM_PROVIDER]: job.roomProvider, [ATTR_ROOM_CONNECT_MS]: Math.round(joined.connectMs) };
    send({ type: 'span', sessionId: job.sessionId, span: { name: SPAN_ROOM_CONNECT, startMs, endMs: Date.now(), attributes } });
  } catch (err) {
    send({ type: 'span', sessionId: job.sessionId, span: { name: SPAN_ROOM_CONNECT, startMs, endMs: Date.now(), attributes: { [ATTR_SESSION_ID]: job.sessionId, [ATTR_ROOM_PROVIDER]: job.roomProvider }, error: (err as Error).message } });
    return { status: 'failed', reason: FailureReason.room_join_failed, message: `The bot could not join its room: ${(err as Error).message}` };
  }
  const outcome = await runInterview(job, {
    room,
    providers,
    store,
    stop: stop.signal,
    settings: {
      joinTimeoutSeconds: config.joinTimeoutSeconds,
      maxSessionSeconds: config.maxSessionSeconds,
      idleTimeoutSeconds: config.idleTimeoutSeconds,
      maxUtteranceSeconds: config.vad.maxUtteranceSeconds,
      vad: config.vad,
      turns: config.turns,
    },
    models,
    onUtteranceBound: () => {
      recycle = true;
    },
    emitSpan: (span) => send({ type: 'span', sessionId: job.sessionId, span }),
    emitLatency: (provider, operation, seconds) => send({ type: 'latency', provider, operation, seconds }),
    emitTurn: (event) => send({ type: 'turn', ...event }),
    onStreamingUnavailable: (reason) => {
      if (streamingNoticed) return;
      streamingNoticed = true;
      log.warn('streaming speech-to-text is not available: turns are transcribed in batch', { reason });
    },
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
      .catch((err: unknown): Outcome => ({ status: 'failed', reason: FailureReason.bot_error, message: `The bot failed: ${(err as Error).message}` }))
      .then((outcome) => {
        busy = false;
        // A flood of audio leaves the heap large even once it is garbage; a fresh process returns
        // that memory to the machine. The worker starts the next bot (BotProcess restarts it).
        const exiting = recycle || process.memoryUsage().rss > RECYCLE_RSS_BYTES;
        const finished: FromBot = { type: 'finished', sessionId: msg.job.sessionId, outcome, ...(exiting ? { recycle: true } : {}) };
        if (exiting) process.send?.(finished, () => process.exit(0));
        else send(finished);
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

// A bug reached the top: end this process (the worker reports the session failed, starts a new bot).
for (const event of ['uncaughtException', 'unhandledRejection'] as const) {
  process.on(event, (err: unknown) => {
    process.stderr.write(`bot: ${event}: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(70);
  });
}

// The worker went away: nothing can receive our outcome any more.
process.on('disconnect', () => process.exit(0));
// A bridge whose bot is gone would linger in its room; its input closing ends it too, this is sooner.
process.on('exit', () => dailyRooms?.close());
// Prewarm: the room client (for LiveKit, its native WebRTC library) loads before the first session.
await prewarmRoomClient(config.roomProvider);
if (!dailyRooms) send({ type: 'ready' });
else {
  // A slot is warm only with its bridge ready; a bridge that cannot start (no Python, no SDK) makes
  // the bot exit, so the slot never takes a session and the supervisor retries with backoff.
  dailyRooms.prewarmed!.ready.then(
    () => send({ type: 'ready' }),
    (err: unknown) => {
      createLogger({ name: 'bot' }).error('the bot cannot take sessions: its Daily bridge did not start', { slot: process.env.BOT_SLOT_ID, reason: (err as Error).message });
      process.exit(1);
    },
  );
}
