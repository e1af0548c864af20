import { ATTR_MODEL, ATTR_PROVIDER, ATTR_SESSION_ID, SPAN_TTS_FIRST_BYTE } from '../telemetry/names.ts';
import type { WorkerConfig } from '../config.ts';
import type { Providers } from '../providers/index.ts';
import { ProviderError } from '../providers/errors.ts';
import type { TranscriptStore } from '../transcripts/store.ts';
import { speakerVoice } from './barge-in-voice.ts';
import { Dialogue } from './dialogue.ts';
import type { InterviewHooks } from './hooks.ts';
import { createListener, type ListeningConfig } from './listening.ts';
import type { Listener } from './listener.ts';
import type { BotJob, Outcome } from './messages.ts';
import { ModelTurn } from './model-turn.ts';
import { buildSummaryPrompt } from './prompts.ts';
import type { BotRoom } from './room-link.ts';
import { Playback } from './playback.ts';
import { Speaker } from './speaker.ts';
import { FailureReason } from '../../lib/failure-reasons.ts';
import { SessionEnd } from './session-end.ts';
import type { TurnModels } from './turns/models.ts';

/**
 * One interview, run by a bot, as a session: it waits for the respondent, builds the stages
 * (listener, speaker, model turn, dialogue), runs the dialogue, then the summary and the transcript.
 * Every wait is bounded (join, idle, whole session, provider deadlines), so a session always ends,
 * as completed or failed with a reason: the first end (a room event, the worker stopping it, the
 * session's length) aborts every stage with that reason.
 *
 * The stages (docs/worker.md, "Turn-taking"): the listener hears the respondent for the whole
 * session (listener.ts, built from the configuration by listening.ts); the speaker says the bot's
 * words sentence by sentence, synthesising ahead (speaker.ts); the model turn calls the language
 * model with its span (model-turn.ts); the dialogue asks, hears, responds and goes on (dialogue.ts).
 */
export type InterviewConfig = Pick<WorkerConfig, 'joinTimeoutSeconds' | 'maxSessionSeconds'> & ListeningConfig;

export interface InterviewDeps {
  room: BotRoom;
  providers: Providers;
  models: TurnModels;
  store: TranscriptStore;
  config: InterviewConfig;
  hooks: InterviewHooks;
  /** Aborted by the worker (shutdown); the reason string becomes the failure reason. */
  stop: AbortSignal;
  /** Wall time in ms (Date.now by default); every stage takes its time from here. */
  clock?: () => number;
}

const SUMMARY_MAX_TOKENS = 400;

export async function runInterview(job: BotJob, deps: InterviewDeps): Promise<Outcome> {
  const clock = deps.clock ?? Date.now;
  const { room, providers, config, hooks } = deps;
  const session = new SessionBounds(room, deps.stop, config.maxSessionSeconds);
  const { signal } = session;
  const startedAt = new Date(clock()).toISOString();
  const playback = new Playback(clock);
  const speaker = new Speaker({
    room,
    tts: providers.tts,
    playback,
    signal,
    clock,
    onFirstByte: (t0, t1, error) => {
      const attributes = { [ATTR_SESSION_ID]: job.sessionId, [ATTR_PROVIDER]: providers.tts.provider, [ATTR_MODEL]: providers.tts.model };
      hooks.telemetry({
        type: 'span',
        span: { name: SPAN_TTS_FIRST_BYTE, startMs: t0, endMs: t1, attributes, ...(error ? { error } : {}) },
      });
      if (!error) hooks.telemetry({ type: 'provider_latency', provider: 'tts', operation: 'first_byte', seconds: (t1 - t0) / 1000 });
    },
  });
  const modelTurn = new ModelTurn({ llm: providers.llm, sessionId: job.sessionId, telemetry: hooks.telemetry, clock });
  const voice = speakerVoice({ speaker, room, mode: config.turns.interruption.mode, telemetry: hooks.telemetry });
  let listener: Listener | null = null;
  try {
    await waitForRespondent(room, config.joinTimeoutSeconds * 1000, signal);
    listener = createListener(config, {
      room,
      providers,
      models: deps.models,
      playback,
      hooks,
      language: job.interview.language,
      signal,
      clock,
      // Their turn's end calls the language model and speech at once: connect to them now.
      onSpeechStart: () => void providers.warm?.(),
      // The barge-in machine (turns/barge-in.ts) drives the voice: a pause or a stop, then the verdict.
      onBargeIn: voice.stop,
      onBargeInSettled: voice.settled,
    });
    const dialogue = new Dialogue({
      sessionId: job.sessionId,
      interview: job.interview,
      room,
      hearing: listener,
      speaker,
      modelTurn,
      telemetry: hooks.telemetry,
      stt: providers.stt,
      signal,
      clock,
      replySplit: { eagerEnd: config.turns.reply.eagerEnd, firstClauseWords: config.turns.reply.firstClauseWords },
      decisions: {
        waitMaxMs: config.turns.reply.llmWaitMaxMs,
        waitStepMs: config.turns.reply.llmWaitStepMs,
        preemptive: config.turns.reply.llmPreemptive,
      },
    });
    const turns = await dialogue.run();
    const summary = (
      await modelTurn.complete(buildSummaryPrompt(job.interview, turns), { purpose: 'summary', signal, maxTokens: SUMMARY_MAX_TOKENS })
    ).trim();
    const transcript = {
      sessionId: job.sessionId,
      interviewId: job.interviewId,
      title: job.interview.title,
      language: job.interview.language,
      startedAt,
      endedAt: new Date(clock()).toISOString(),
      turns,
      summary,
    };
    let transcriptKey: string;
    try {
      transcriptKey = await deps.store.put(job.sessionId, JSON.stringify(transcript, null, 2));
    } catch (err) {
      throw new SessionEnd(FailureReason.transcript_store_error, 'failed', `The transcript could not be stored: ${(err as Error).message}`);
    }
    room.sendControl({ type: 'ended', reason: 'completed' });
    return { status: 'completed', response: { transcriptKey, summary } };
  } catch (err) {
    const failure = session.ended ?? toSessionEnd(err);
    room.sendControl({ type: 'ended', reason: failure.ended });
    return { status: 'failed', reason: failure.reason, message: failure.message };
  } finally {
    session.close();
    listener?.close();
    room.close();
  }
}

/**
 * What ends a session from outside the conversation: the respondent hanging up or leaving, the
 * room closing, the worker stopping the bot, MAX_SESSION_SECONDS. The first one wins and aborts
 * `signal` with its SessionEnd.
 */
class SessionBounds {
  ended: SessionEnd | null = null;
  private readonly abort = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly room: BotRoom;
  private readonly stop: AbortSignal;
  private readonly onHangup = () =>
    this.end(new SessionEnd(FailureReason.respondent_hangup, 'hangup', 'The respondent hung up before the end.'));
  private readonly onLeft = () =>
    this.end(new SessionEnd(FailureReason.respondent_left, 'hangup', 'The respondent left the room before the end.'));
  private readonly onClosed = () => this.end(new SessionEnd(FailureReason.room_closed, 'failed', 'The room closed under the bot.'));
  private readonly onStop = () =>
    this.end(new SessionEnd(String(this.stop.reason ?? FailureReason.worker_shutdown), 'failed', 'The worker is shutting down.'));

  constructor(room: BotRoom, stop: AbortSignal, maxSessionSeconds: number) {
    this.room = room;
    this.stop = stop;
    this.timer = setTimeout(
      () =>
        this.end(
          new SessionEnd(FailureReason.max_duration, 'timeout', `The session reached MAX_SESSION_SECONDS (${maxSessionSeconds} s).`),
        ),
      maxSessionSeconds * 1000,
    );
    room.on('hangup', this.onHangup);
    room.on('left', this.onLeft);
    room.on('closed', this.onClosed);
    stop.addEventListener('abort', this.onStop, { once: true });
    if (stop.aborted) this.onStop();
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  private end(e: SessionEnd): void {
    if (this.ended) return;
    this.ended = e;
    this.abort.abort(e);
  }

  close(): void {
    clearTimeout(this.timer);
    this.room.off('hangup', this.onHangup);
    this.room.off('left', this.onLeft);
    this.room.off('closed', this.onClosed);
    this.stop.removeEventListener('abort', this.onStop);
  }
}

function toSessionEnd(err: unknown): SessionEnd {
  if (err instanceof SessionEnd) return err;
  if (err instanceof ProviderError) return new SessionEnd(err.reason, 'failed', err.message);
  return new SessionEnd(FailureReason.bot_error, 'failed', 'The bot failed unexpectedly.');
}

async function waitForRespondent(room: BotRoom, timeoutMs: number, signal: AbortSignal): Promise<void> {
  if (room.respondentPresent) return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => done(new SessionEnd(FailureReason.respondent_absent, 'timeout', `The respondent did not join within ${timeoutMs / 1000} s.`)),
      timeoutMs,
    );
    const onJoined = () => done();
    const onAbort = () => done(signal.reason as Error);
    const done = (err?: Error) => {
      clearTimeout(timer);
      room.off('joined', onJoined);
      signal.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else resolve();
    };
    room.on('joined', onJoined);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
