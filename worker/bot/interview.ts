import { ATTR_LLM_PURPOSE, ATTR_LLM_TTFT_MS, ATTR_MODEL, ATTR_PROVIDER, ATTR_SESSION_ID, SPAN_LLM_TURN, SPAN_TTS_FIRST_BYTE } from '../telemetry/names.ts';
import type { Providers } from '../providers/index.ts';
import { ProviderError } from '../providers/errors.ts';
import type { TranscriptStore } from '../transcripts/store.ts';
import type { BotJob, InterviewQuestion, Outcome, SpanRecord } from './messages.ts';
import { buildDecisionPrompt, buildSummaryPrompt, parseDecision, type Turn } from './prompts.ts';
import type { BotRoom } from './room-link.ts';
import { listen, type ListenSettings } from './listen.ts';
import { frames } from './audio.ts';
import { SessionEnd } from './session-end.ts';

/**
 * One interview, run by a bot: greeting, each question with follow-ups the language model
 * decides, closing, summary, transcript. Every wait is bounded (join, idle, whole session,
 * provider deadlines), so a session always ends, as completed or failed with a reason.
 */
export interface InterviewSettings {
  listen: ListenSettings;
  joinTimeoutSeconds: number;
  maxSessionSeconds: number;
}

export interface InterviewDeps {
  room: BotRoom;
  providers: Providers;
  store: TranscriptStore;
  settings: InterviewSettings;
  emitSpan(span: SpanRecord): void;
  emitLatency(provider: 'stt' | 'llm' | 'tts', operation: string, seconds: number): void;
  /** Aborted by the worker (shutdown); the reason string becomes the failure reason. */
  stop: AbortSignal;
  /** A turn hit the utterance byte bound: the process should be recycled after this session. */
  onUtteranceBound?: () => void;
  clock?: () => number;
}

const FRAME_BYTES_24K = 960; // 20 ms of 24 kHz 16-bit mono

export async function runInterview(job: BotJob, deps: InterviewDeps): Promise<Outcome> {
  const now = deps.clock ?? Date.now;
  const { room, providers } = deps;
  const abort = new AbortController();
  let ending: SessionEnd | null = null;
  const end = (e: SessionEnd) => {
    if (ending) return;
    ending = e;
    abort.abort(e);
  };
  const maxTimer = setTimeout(() => end(new SessionEnd('max_duration', 'timeout', `The session reached MAX_SESSION_SECONDS (${deps.settings.maxSessionSeconds} s).`)), deps.settings.maxSessionSeconds * 1000);
  const onHangup = () => end(new SessionEnd('respondent_hangup', 'hangup', 'The respondent hung up before the end.'));
  const onLeft = () => end(new SessionEnd('respondent_left', 'hangup', 'The respondent left the room before the end.'));
  const onClosed = () => end(new SessionEnd('room_closed', 'failed', 'The room closed under the bot.'));
  const onStop = () => end(new SessionEnd(String(deps.stop.reason ?? 'worker_shutdown'), 'failed', 'The worker is shutting down.'));
  room.on('hangup', onHangup);
  room.on('left', onLeft);
  room.on('closed', onClosed);
  deps.stop.addEventListener('abort', onStop, { once: true });
  if (deps.stop.aborted) onStop();

  const base = { [ATTR_SESSION_ID]: job.sessionId };
  const turns: Turn[] = [];
  let utterance = 0;
  let playbackMs = 0;
  const startedAt = new Date(now()).toISOString();

  const check = () => {
    if (ending) throw ending;
  };

  const say = async (text: string, questionId?: string): Promise<void> => {
    check();
    const utteranceId = `u${++utterance}`;
    room.sendControl({ type: 'state', state: 'speaking' });
    room.sendControl({ type: 'caption', speaker: 'bot', text, final: true });
    turns.push({ speaker: 'bot', text, questionId, at: new Date(now()).toISOString() });
    const t0 = now();
    let first = true;
    let carry = Buffer.alloc(0);
    let bytes = 0;
    const attrs = { ...base, [ATTR_PROVIDER]: providers.tts.provider, [ATTR_MODEL]: providers.tts.model };
    try {
      for await (const chunk of providers.tts.synthesize(text, { signal: abort.signal })) {
        if (first) {
          first = false;
          const t1 = now();
          deps.emitSpan({ name: SPAN_TTS_FIRST_BYTE, startMs: t0, endMs: t1, attributes: attrs });
          deps.emitLatency('tts', 'first_byte', (t1 - t0) / 1000);
        }
        // Frames carry whole samples: an odd byte waits for the next chunk.
        const data = carry.length ? Buffer.concat([carry, chunk]) : chunk;
        const usable = data.length - (data.length % 2);
        for (const frame of frames(data.subarray(0, usable), FRAME_BYTES_24K)) room.sendAudio(frame);
        carry = Buffer.from(data.subarray(usable));
        bytes += usable;
      }
    } catch (err) {
      if (first) deps.emitSpan({ name: SPAN_TTS_FIRST_BYTE, startMs: t0, endMs: now(), attributes: attrs, error: (err as Error).message });
      throw err;
    }
    room.sendControl({ type: 'audio_end', utteranceId });
    playbackMs = (bytes / 2 / providers.tts.sampleRate) * 1000;
  };

  const hear = async (questionId: string): Promise<string> => {
    check();
    room.sendControl({ type: 'state', state: 'listening' });
    const pcm = await listen(room, deps.settings.listen, { signal: abort.signal, extraWaitMs: playbackMs, ...(deps.onUtteranceBound ? { onBound: deps.onUtteranceBound } : {}) });
    room.sendControl({ type: 'state', state: 'thinking' });
    const t0 = now();
    const text = await providers.stt.transcribe(pcm, { sampleRate: deps.settings.listen.sampleRate, language: job.interview.language, signal: abort.signal });
    deps.emitLatency('stt', 'transcribe', (now() - t0) / 1000);
    room.sendControl({ type: 'caption', speaker: 'respondent', text, final: true });
    turns.push({ speaker: 'respondent', text, questionId, at: new Date(now()).toISOString() });
    return text;
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

  const askQuestion = async (q: InterviewQuestion): Promise<void> => {
    await say(q.text, q.id);
    for (let followUps = 0; ; followUps++) {
      await hear(q.id);
      if (followUps >= q.maxFollowUps) return;
      const messages = buildDecisionPrompt(job.interview, q, turns, followUps);
      const reply = await llmTurn('follow_up', async (mark) => {
        let text = '';
        for await (const delta of providers.llm.stream(messages, { signal: abort.signal, maxTokens: 120 })) {
          mark();
          text += delta;
        }
        return text;
      });
      const decision = parseDecision(reply);
      if (decision.kind === 'next') return;
      await say(decision.text, q.id);
    }
  };

  try {
    await waitForRespondent(room, deps.settings.joinTimeoutSeconds * 1000, abort.signal);
    await say(job.interview.intro);
    for (const q of job.interview.questions) await askQuestion(q);
    await say(job.interview.closing);
    const summary = (await llmTurn('summary', () => providers.llm.complete(buildSummaryPrompt(job.interview, turns), { signal: abort.signal, maxTokens: 400 }))).trim();
    const transcript = { sessionId: job.sessionId, interviewId: job.interviewId, title: job.interview.title, language: job.interview.language, startedAt, endedAt: new Date(now()).toISOString(), turns, summary };
    let transcriptKey: string;
    try {
      transcriptKey = await deps.store.put(job.sessionId, JSON.stringify(transcript, null, 2));
    } catch (err) {
      throw new SessionEnd('transcript_store_error', 'failed', `The transcript could not be stored: ${(err as Error).message}`);
    }
    room.sendControl({ type: 'ended', reason: 'completed' });
    return { status: 'completed', response: { transcriptKey, summary } };
  } catch (err) {
    const failure = (ending as SessionEnd | null) ?? toSessionEnd(err);
    room.sendControl({ type: 'ended', reason: failure.ended });
    return { status: 'failed', reason: failure.reason, message: failure.message };
  } finally {
    clearTimeout(maxTimer);
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
  return new SessionEnd('bot_error', 'failed', 'The bot failed unexpectedly.');
}

async function waitForRespondent(room: BotRoom, timeoutMs: number, signal: AbortSignal): Promise<void> {
  if (room.respondentPresent) return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => done(new SessionEnd('respondent_absent', 'timeout', `The respondent did not join within ${timeoutMs / 1000} s.`)), timeoutMs);
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
