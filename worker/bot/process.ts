import { createLogger } from '../../lib/log.ts';
import { loadConfig } from '../config.ts';
import { createProviders } from '../providers/index.ts';
import { createTranscriptStore } from '../transcripts/store.ts';
import { runInterview } from './interview.ts';
import { loadTurnModels } from './turns/models.ts';
import { ToBotSchema, type BotJob, type FromBot, type Outcome } from './messages.ts';
import { ATTR_ROOM_CONNECT_MS, ATTR_ROOM_PROVIDER, ATTR_SESSION_ID, SPAN_ROOM_CONNECT } from '../telemetry/names.ts';
import { openRoomLink, type BotRoom } from './room-link.ts';
import { FailureReason } from '../../lib/failure-reasons.ts';

/**
 * A prewarmed bot: its own process, started by the worker with the same environment. It builds
 * its provider clients, its room client and its turn models once, says `ready`, and runs each
 * `assign` as an interview, up to BOT_SESSIONS_PER_PROCESS at once (1 by default), all sharing
 * those. A crash here ends only this process's sessions; the worker reports them and starts a fresh bot.
 */
const config = loadConfig(process.env);
const providers = createProviders(config);
const store = createTranscriptStore(config);
// The room transport's bot side opens with the bot (the prewarm: LiveKit's native client loads, a
// Daily bridge process starts), so a session's join waits for neither.
const rooms = await openRoomLink(config);
const log = createLogger({ name: 'bot' });
let streamingNoticed = false;
// The turn models load with the bot (prewarm), not at its first turn.
// In threads of their own with TURN_MODEL_THREAD=true; a thread that dies takes the process with it,
// so its sessions are reported as for any crash of the bot.
const models = await loadTurnModels(
  config.turns.engines,
  config.turnModelThread
    ? {
        onLost: (err) => {
          process.stderr.write(`bot: ${err.message}\n`);
          process.exit(70);
        },
      }
    : undefined,
);
/** The sessions running here, each with its own stop. */
const running = new Map<string, AbortController>();
/**
 * Set when a session pushed this process to hold a lot of audio. The worker is told at once, gives
 * the process no new session and retires it once its sessions end (the worker decides the moment:
 * only it knows whether an assignment is on its way).
 */
let recycle = false;
function startRecycling(): void {
  if (recycle) return;
  recycle = true;
  send({ type: 'recycling' });
}
const MiB = 1024 * 1024;
/** The resident size past which the process is renewed after a session: more room for more sessions at once. */
const RECYCLE_RSS_BYTES = 512 * MiB + (config.botSessionsPerProcess - 1) * 128 * MiB;

function send(msg: FromBot): void {
  process.send?.(msg);
}

async function run(job: BotJob, stop: AbortSignal): Promise<Outcome> {
  let room: BotRoom;
  const startMs = Date.now();
  try {
    // Each transport joins within its own deadline (a WebRTC connect takes longer than a WebSocket upgrade).
    const joined = await rooms.join(job.ticket);
    room = joined.room;
    const attributes = {
      [ATTR_SESSION_ID]: job.sessionId,
      [ATTR_ROOM_PROVIDER]: job.ticket.transport,
      [ATTR_ROOM_CONNECT_MS]: Math.round(joined.connectMs),
    };
    send({
      type: 'telemetry',
      sessionId: job.sessionId,
      event: { type: 'span', span: { name: SPAN_ROOM_CONNECT, startMs, endMs: Date.now(), attributes } },
    });
  } catch (err) {
    const span = {
      name: SPAN_ROOM_CONNECT,
      startMs,
      endMs: Date.now(),
      attributes: { [ATTR_SESSION_ID]: job.sessionId, [ATTR_ROOM_PROVIDER]: job.ticket.transport },
      error: (err as Error).message,
    };
    send({ type: 'telemetry', sessionId: job.sessionId, event: { type: 'span', span } });
    return {
      status: 'failed',
      reason: FailureReason.room_join_failed,
      message: `The bot could not join its room: ${(err as Error).message}`,
    };
  }
  const outcome = await runInterview(job, {
    room,
    providers,
    store,
    stop,
    config,
    models,
    hooks: {
      telemetry: (event) => send({ type: 'telemetry', sessionId: job.sessionId, event }),
      utteranceBound: startRecycling,
      streamingUnavailable: (reason) => {
        if (streamingNoticed) return;
        streamingNoticed = true;
        log.warn('streaming speech-to-text is not available: turns are transcribed in batch', { reason });
      },
    },
  });
  // The closing words play out before the worker hears the outcome and deletes the room.
  await room.whenClosed();
  return outcome;
}

process.on('message', (raw: unknown) => {
  // Checked like the bot's messages are at the worker (FromBotSchema): a malformed job is refused whole.
  const parsed = ToBotSchema.safeParse(raw);
  if (!parsed.success) {
    const problem = `${parsed.error.issues[0]?.path.join('.') ?? ''}: ${parsed.error.issues[0]?.message ?? 'invalid message'}`;
    log.error('refused an invalid message from the worker', { problem });
    // A job we cannot read still ends, so that its session is reported and its slot comes back.
    const sessionId = (raw as { job?: { sessionId?: unknown } } | null)?.job?.sessionId;
    if (typeof sessionId === 'string' && !running.has(sessionId))
      send({
        type: 'finished',
        sessionId,
        outcome: { status: 'failed', reason: FailureReason.bot_error, message: `The bot could not read its job (${problem}).` },
      });
    return;
  }
  const msg = parsed.data;
  if (msg.type === 'assign') {
    // The supervisor never assigns past the capacity: ignore rather than corrupt a session. (One
    // sent before it heard `recycling` still runs here.)
    if (running.size >= config.botSessionsPerProcess || running.has(msg.job.sessionId)) {
      log.error('refused a session beyond what this bot takes', { running: running.size, recycling: recycle });
      return;
    }
    const stop = new AbortController();
    running.set(msg.job.sessionId, stop);
    void run(msg.job, stop.signal)
      .catch((err: unknown): Outcome => ({
        status: 'failed',
        reason: FailureReason.bot_error,
        message: `The bot failed: ${(err as Error).message}`,
      }))
      .then((outcome) => {
        running.delete(msg.job.sessionId);
        // A flood of audio leaves the heap large even once it is garbage; a fresh process returns
        // that memory to the machine (the worker starts the next bot once this one retires).
        if (process.memoryUsage().rss > RECYCLE_RSS_BYTES) startRecycling();
        send({ type: 'finished', sessionId: msg.job.sessionId, outcome });
      });
  } else if (msg.type === 'stop') {
    running.get(msg.sessionId)?.abort(msg.reason);
  } else if (msg.type === 'retire') {
    if (running.size === 0) process.exit(0);
    log.error('asked to retire with sessions running; staying', { running: running.size });
  }
});

// Signals sent to the whole process group (Ctrl-C, a group SIGTERM) must not cut a live interview:
// the worker drains and stops the bot itself over IPC, or kills it after its grace period.
for (const signal of ['SIGTERM', 'SIGINT'] as const)
  process.on(signal, () => {
    if (running.size === 0) process.exit(0);
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
// What the transport started ahead (a Daily bridge) would linger in its room; its input closing ends it too, this is sooner.
process.on('exit', () => rooms.close());
// A slot is warm only once its transport is ready (Daily: its bridge); one that cannot start (no
// Python, no SDK) makes the bot exit, so the slot never takes a session and the supervisor retries
// with backoff.
rooms.ready.then(
  () => send({ type: 'ready' }),
  (err: unknown) => {
    log.error(`the bot cannot take sessions: ${rooms.notReady}`, { slot: process.env.BOT_SLOT_ID, reason: (err as Error).message });
    process.exit(1);
  },
);
