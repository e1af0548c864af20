import {
  ATTR_LLM_PURPOSE,
  ATTR_LLM_TTFT_MS,
  ATTR_MODEL,
  ATTR_PROVIDER,
  ATTR_SESSION_ID,
  ATTR_STT_MODE,
  ATTR_TURN_END_REASON,
  ATTR_TURN_INFERENCE_MS,
  ATTR_TURN_PROBABILITY,
  SPAN_LLM_TURN,
  SPAN_STT_FINAL,
  SPAN_TTS_FIRST_BYTE,
  SPAN_TURN_END,
} from '../telemetry/names.ts';
import type { TurnSettings } from '../config.ts';
import type { Providers } from '../providers/index.ts';
import { ProviderError } from '../providers/errors.ts';
import type { ChatMessage } from '../providers/llm.ts';
import type { TranscriptStore } from '../transcripts/store.ts';
import type { BotJob, InterviewQuestion, Outcome, SpanRecord } from './messages.ts';
import { buildDecisionPrompt, buildSummaryPrompt, type Turn } from './prompts.ts';
import type { BotRoom } from './room-link.ts';
import { Listener, type HeardTurn } from './listener.ts';
import { Playback } from './playback.ts';
import { Speaker } from './speaker.ts';
import { SessionEnd } from './session-end.ts';
import { streamDecision } from './turns/decision-stream.ts';
import { energyFrameVad, sileroFrameVad } from './turns/frame-vad.ts';
import { splitSentences } from './turns/sentences.ts';
import { TurnTranscriber } from './turns/transcriber.ts';
import type { TurnModels } from './turns/models.ts';
import { FailureReason } from '../../lib/failure-reasons.ts';

/**
 * One interview, run by a bot: greeting, each question with follow-ups the language model
 * decides, closing, summary, transcript. Every wait is bounded (join, idle, whole session,
 * provider deadlines), so a session always ends, as completed or failed with a reason.
 *
 * Turn-taking (docs/worker.md, "Turn-taking"): the respondent is heard for the whole session
 * (listener.ts), so they can cut in while the bot speaks, and a turn that was taken as ended too
 * soon is joined up with what they go on to say; the bot's words are spoken sentence by sentence
 * as they are written, and the words that come next are synthesised ahead (speaker.ts).
 */
export interface InterviewSettings {
  joinTimeoutSeconds: number;
  maxSessionSeconds: number;
  idleTimeoutSeconds: number;
  maxUtteranceSeconds: number;
  vad: { thresholdDbfs: number; silenceMs: number; minSpeechMs: number };
  turns: TurnSettings;
}

export interface TurnEvent {
  kind: 'turn_end' | 'interruption';
  /** turn_end: silence | model | max; interruption: barge_in | backchannel. */
  reason: string;
  /** turn_end: end of the respondent's speech to the bot's first audio, when the bot answered. */
  latencySeconds?: number;
}

export interface InterviewDeps {
  room: BotRoom;
  providers: Providers;
  models: TurnModels;
  store: TranscriptStore;
  settings: InterviewSettings;
  emitSpan(span: SpanRecord): void;
  emitLatency(provider: 'stt' | 'llm' | 'tts', operation: string, seconds: number): void;
  emitTurn?(event: TurnEvent): void;
  /** Aborted by the worker (shutdown); the reason string becomes the failure reason. */
  stop: AbortSignal;
  /** A turn hit the utterance byte bound: the process should be recycled after this session. */
  onUtteranceBound?: () => void;
  /** Streaming speech-to-text was given up for this session (the provider has none, or it broke). */
  onStreamingUnavailable?: (reason: string) => void;
  clock?: () => number;
}

const LISTEN_RATE = 16_000;

export async function runInterview(job: BotJob, deps: InterviewDeps): Promise<Outcome> {
  const now = deps.clock ?? Date.now;
  const { room, providers, settings } = deps;
  const abort = new AbortController();
  let ending: SessionEnd | null = null;
  const end = (e: SessionEnd) => {
    if (ending) return;
    ending = e;
    abort.abort(e);
  };
  const maxTimer = setTimeout(() => end(new SessionEnd(FailureReason.max_duration, 'timeout', `The session reached MAX_SESSION_SECONDS (${settings.maxSessionSeconds} s).`)), settings.maxSessionSeconds * 1000);
  const onHangup = () => end(new SessionEnd(FailureReason.respondent_hangup, 'hangup', 'The respondent hung up before the end.'));
  const onLeft = () => end(new SessionEnd(FailureReason.respondent_left, 'hangup', 'The respondent left the room before the end.'));
  const onClosed = () => end(new SessionEnd(FailureReason.room_closed, 'failed', 'The room closed under the bot.'));
  const onStop = () => end(new SessionEnd(String(deps.stop.reason ?? FailureReason.worker_shutdown), 'failed', 'The worker is shutting down.'));
  room.on('hangup', onHangup);
  room.on('left', onLeft);
  room.on('closed', onClosed);
  deps.stop.addEventListener('abort', onStop, { once: true });
  if (deps.stop.aborted) onStop();

  const base = { [ATTR_SESSION_ID]: job.sessionId };
  const turns: Turn[] = [];
  let utterance = 0;
  const startedAt = new Date(now()).toISOString();
  const playback = new Playback(now);
  const turnSettings = settings.turns;
  const speaker = new Speaker({
    room,
    tts: providers.tts,
    playback,
    signal: abort.signal,
    clock: now,
    onFirstByte: (t0, t1, error) => {
      deps.emitSpan({ name: SPAN_TTS_FIRST_BYTE, startMs: t0, endMs: t1, attributes: { ...base, [ATTR_PROVIDER]: providers.tts.provider, [ATTR_MODEL]: providers.tts.model }, ...(error ? { error } : {}) });
      if (!error) deps.emitLatency('tts', 'first_byte', (t1 - t0) / 1000);
    },
  });
  let listener: Listener | null = null;
  /** The respondent turn the bot is answering: its end of speech times the bot's first audio. */
  let answering: HeardTurn | null = null;

  const check = () => {
    if (ending) throw ending;
  };

  /** Speaks `source` (text, or sentences as a reply streams in); the respondent may cut in. */
  const say = async (source: string | AsyncIterable<string>, questionId?: string): Promise<{ interrupted: boolean }> => {
    check();
    const utteranceId = `u${++utterance}`;
    room.sendControl({ type: 'state', state: 'speaking' });
    const spoken: string[] = [];
    const captioned = async function* (): AsyncIterable<string> {
      for await (const sentence of typeof source === 'string' ? splitSentences(source) : source) {
        spoken.push(sentence);
        room.sendControl({ type: 'caption', speaker: 'bot', text: sentence, final: true });
        yield sentence;
      }
    };
    const result = await speaker.speak(captioned());
    if (spoken.length > 0) turns.push({ speaker: 'bot', text: spoken.join(' '), questionId, at: new Date(now()).toISOString() });
    if (answering && result.firstAudioAt !== null) {
      deps.emitTurn?.({ kind: 'turn_end', reason: answering.reason, latencySeconds: Math.max(0, result.firstAudioAt - answering.speechEndedAt) / 1000 });
      answering = null;
    }
    if (!result.interrupted) room.sendControl({ type: 'audio_end', utteranceId });
    check();
    return result;
  };

  /** Waits until the respondent is not mid-turn, so the bot does not start over them. */
  const quiet = async (): Promise<void> => {
    while (listener?.busy) {
      check();
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  const record = (turn: HeardTurn, questionId?: string): void => {
    room.sendControl({ type: 'caption', speaker: 'respondent', text: turn.text, final: true });
    turns.push({ speaker: 'respondent', text: turn.text, questionId, at: new Date(turn.finalAt).toISOString() });
  };

  /** The respondent's answer to what the bot just asked (asked at `since`). */
  const hear = async (since: number, questionId: string): Promise<HeardTurn> => {
    for (;;) {
      check();
      room.sendControl({ type: 'state', state: 'listening' });
      const turn = await raceAbort(listener!.nextTurn(since, (stale) => record(stale)), abort.signal);
      if (turn.backchannel) {
        // "mm-hm" over the question: it goes on from the sentence that was cut.
        deps.emitTurn?.({ kind: 'interruption', reason: 'backchannel' });
        const rest = speaker.takeInterrupted();
        if (rest.length > 0) await say(toAsync(rest), questionId);
        continue;
      }
      speaker.takeInterrupted();
      room.sendControl({ type: 'state', state: 'thinking' });
      emitTurnSpans(turn);
      record(turn, questionId);
      answering = turn;
      return turn;
    }
  };

  const emitTurnSpans = (turn: HeardTurn): void => {
    const attributes = { ...base, [ATTR_TURN_END_REASON]: turn.reason, ...(turn.probability !== undefined ? { [ATTR_TURN_PROBABILITY]: Number(turn.probability.toFixed(3)), [ATTR_TURN_INFERENCE_MS]: Math.round(turn.inferenceMs ?? 0) } : {}) };
    deps.emitSpan({ name: SPAN_TURN_END, startMs: turn.speechEndedAt, endMs: turn.decidedAt, attributes });
    deps.emitSpan({ name: SPAN_STT_FINAL, startMs: turn.decidedAt, endMs: Math.max(turn.decidedAt, turn.finalAt), attributes: { ...base, [ATTR_PROVIDER]: providers.stt.provider, [ATTR_MODEL]: providers.stt.model, [ATTR_STT_MODE]: turn.sttMode } });
    deps.emitLatency('stt', turn.sttMode === 'realtime' ? 'final' : 'transcribe', Math.max(0, turn.finalAt - turn.decidedAt) / 1000);
    deps.emitTurn?.({ kind: 'turn_end', reason: turn.reason });
  };

  const llmTurn = async (purpose: 'follow_up' | 'summary', run: (mark: () => void) => Promise<string>): Promise<string> => {
    check();
    const t0 = now();
    let ttft: number | undefined;
    const attrs = { ...base, [ATTR_PROVIDER]: providers.llm.provider, [ATTR_MODEL]: providers.llm.model, [ATTR_LLM_PURPOSE]: purpose };
    try {
      const text = await run(() => (ttft ??= now() - t0));
      const t1 = now();
      deps.emitSpan({ name: SPAN_LLM_TURN, startMs: t0, endMs: t1, attributes: { ...attrs, ...(ttft !== undefined ? { [ATTR_LLM_TTFT_MS]: ttft } : {}) } });
      deps.emitLatency('llm', purpose, (t1 - t0) / 1000);
      return text;
    } catch (err) {
      deps.emitSpan({ name: SPAN_LLM_TURN, startMs: t0, endMs: now(), attributes: attrs, error: (err as Error).message });
      throw err;
    }
  };

  /** The language model's reply, streamed, with its llm.turn span. */
  const llmDeltas = async function* (messages: ChatMessage[], signal: AbortSignal): AsyncIterable<string> {
    const t0 = now();
    let ttft: number | undefined;
    const attrs = { ...base, [ATTR_PROVIDER]: providers.llm.provider, [ATTR_MODEL]: providers.llm.model, [ATTR_LLM_PURPOSE]: 'follow_up' };
    try {
      for await (const delta of providers.llm.stream(messages, { signal, maxTokens: 120 })) {
        ttft ??= now() - t0;
        yield delta;
      }
    } catch (err) {
      deps.emitSpan({ name: SPAN_LLM_TURN, startMs: t0, endMs: now(), attributes: attrs, error: (err as Error).message });
      throw err;
    }
    const t1 = now();
    deps.emitSpan({ name: SPAN_LLM_TURN, startMs: t0, endMs: t1, attributes: { ...attrs, ...(ttft !== undefined ? { [ATTR_LLM_TTFT_MS]: ttft } : {}) } });
    deps.emitLatency('llm', 'follow_up', (t1 - t0) / 1000);
  };

  /** The respondent went on after the turn was taken as ended: their words join the answer. */
  const continueAnswer = async (answer: HeardTurn, questionId: string): Promise<HeardTurn> => {
    const more = await hear(answer.startedAt, questionId);
    const mine = turns.filter((t) => t.speaker === 'respondent' && t.questionId === questionId);
    const [previous, latest] = mine.slice(-2);
    if (previous && latest && latest.text === more.text) {
      previous.text = `${previous.text} ${more.text}`.trim();
      turns.splice(turns.lastIndexOf(latest), 1);
    }
    return { ...more, text: `${answer.text} ${more.text}`.trim(), startedAt: answer.startedAt };
  };

  /**
   * After an answer: the language model decides, and a follow-up is spoken sentence by sentence as
   * it is written. If the respondent starts again before the bot's first word, the reply is
   * dropped and their words join the answer (the end of turn was premature). Returns whether the
   * interview moves on.
   */
  const respond = async (q: InterviewQuestion, answer: HeardTurn, followUps: number): Promise<'next' | 'asked'> => {
    let current = answer;
    for (;;) {
      check();
      if (followUps >= q.maxFollowUps) {
        if (!listener!.busy) return 'next';
        current = await continueAnswer(current, q.id);
        continue;
      }
      const controller = new AbortController();
      const decision = streamDecision(llmDeltas(buildDecisionPrompt(job.interview, q, turns, followUps), AbortSignal.any([abort.signal, controller.signal])));
      const resumed = listener!.speechStarted();
      const first = await Promise.race([decision.kind, resumed.promise.then(() => 'resumed' as const)]);
      resumed.cancel();
      if (first === 'resumed') {
        controller.abort();
        await decision.done.catch(() => undefined);
        current = await continueAnswer(current, q.id);
        continue;
      }
      if (first === 'next') {
        await decision.done;
        if (!listener!.busy) return 'next';
        current = await continueAnswer(current, q.id);
        continue;
      }
      await say(decision.sentences, q.id);
      await decision.done;
      return 'asked';
    }
  };

  const askQuestion = async (q: InterviewQuestion, next: string): Promise<void> => {
    await quiet();
    let since = now();
    await say(q.text, q.id);
    for (let followUps = 0; ; followUps++) {
      const answer = await hear(since, q.id);
      // Whatever the decision, the next words are ready to play the moment it is made.
      speaker.prepare(next);
      since = now();
      if ((await respond(q, answer, followUps)) === 'next') return;
    }
  };

  try {
    await waitForRespondent(room, settings.joinTimeoutSeconds * 1000, abort.signal);
    deps.models.vad?.reset(); // a bot runs one session after another: no state carries over
    listener = new Listener({
      room,
      detector: {
        vad: deps.models.vad && turnSettings.vadEngine === 'silero' ? sileroFrameVad(deps.models.vad, turnSettings.vadSpeechThreshold) : energyFrameVad(settings.vad.thresholdDbfs),
        model: turnSettings.detection === 'model' ? deps.models.turn : null,
        settings: {
          detection: turnSettings.detection === 'model' && deps.models.turn ? 'model' : 'silence',
          minSpeechMs: settings.vad.minSpeechMs,
          silenceMs: settings.vad.silenceMs,
          modelSilenceMs: turnSettings.modelSilenceMs,
          maxSilenceMs: turnSettings.maxSilenceMs,
          modelThreshold: turnSettings.modelThreshold,
          maxUtteranceBytes: settings.maxUtteranceSeconds * LISTEN_RATE * 2,
        },
        clock: now,
      },
      transcriber: new TurnTranscriber({
        batch: providers.stt,
        streaming: turnSettings.sttMode === 'realtime' ? providers.sttStream : null,
        language: job.interview.language,
        signal: abort.signal,
        ...(deps.onStreamingUnavailable ? { onStreamingUnavailable: deps.onStreamingUnavailable } : {}),
      }),
      playback,
      language: job.interview.language,
      settings: {
        idleTimeoutSeconds: settings.idleTimeoutSeconds,
        maxUtteranceSeconds: settings.maxUtteranceSeconds,
        bargeIn: turnSettings.bargeIn,
        bargeInMinSpeechMs: turnSettings.bargeInMinSpeechMs,
        bargeInConfirmMs: turnSettings.bargeInConfirmMs,
        stallMs: Math.max(turnSettings.maxSilenceMs, settings.vad.silenceMs) + 500,
      },
      signal: abort.signal,
      onBargeIn: () => {
        if (!speaker.audible) return;
        speaker.interrupt();
        deps.emitTurn?.({ kind: 'interruption', reason: 'barge_in' });
      },
      ...(deps.onUtteranceBound ? { onBound: deps.onUtteranceBound } : {}),
      clock: now,
    });
    const questions = job.interview.questions;
    speaker.prepare(job.interview.intro);
    if (questions[0]) speaker.prepare(questions[0].text);
    await say(job.interview.intro);
    for (const [i, q] of questions.entries()) await askQuestion(q, questions[i + 1]?.text ?? job.interview.closing);
    await quiet();
    await say(job.interview.closing);
    const summary = (await llmTurn('summary', () => providers.llm.complete(buildSummaryPrompt(job.interview, turns), { signal: abort.signal, maxTokens: 400 }))).trim();
    const transcript = { sessionId: job.sessionId, interviewId: job.interviewId, title: job.interview.title, language: job.interview.language, startedAt, endedAt: new Date(now()).toISOString(), turns, summary };
    let transcriptKey: string;
    try {
      transcriptKey = await deps.store.put(job.sessionId, JSON.stringify(transcript, null, 2));
    } catch (err) {
      throw new SessionEnd(FailureReason.transcript_store_error, 'failed', `The transcript could not be stored: ${(err as Error).message}`);
    }
    room.sendControl({ type: 'ended', reason: 'completed' });
    return { status: 'completed', response: { transcriptKey, summary } };
  } catch (err) {
    const failure = (ending as SessionEnd | null) ?? toSessionEnd(err);
    room.sendControl({ type: 'ended', reason: failure.ended });
    return { status: 'failed', reason: failure.reason, message: failure.message };
  } finally {
    clearTimeout(maxTimer);
    listener?.close();
    room.off('hangup', onHangup);
    room.off('left', onLeft);
    room.off('closed', onClosed);
    deps.stop.removeEventListener('abort', onStop);
    room.close();
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
    const timer = setTimeout(() => done(new SessionEnd(FailureReason.respondent_absent, 'timeout', `The respondent did not join within ${timeoutMs / 1000} s.`)), timeoutMs);
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

function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err as Error);
      },
    );
  });
}

async function* toAsync(items: string[]): AsyncIterable<string> {
  yield* items;
}
